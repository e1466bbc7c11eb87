@testable import FluxBus
import FluxBusProtocol
import Testing

/// Tracing only observes: the same seeded runs, faults included, with every single dispatch traced and with none,
/// give the same order, the same answers and the same states, and the traced run's answers carry waterfalls.
@Suite("Simulated traced dispatches")
struct TraceScenarioTests {
    static let traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

    static func run(seed: UInt64, traced: Bool) -> SimCluster {
        let cluster = SimCluster(seed: seed, actionsPerClient: 12)
        for index in cluster.clients.indices { cluster.clients[index].traceparent = traced ? traceparent : "" }
        #expect(ScenarioTests.settle(cluster), "seed \(seed): \(cluster.checker.recentSteps.suffix(10))")
        #expect(cluster.checker.violation == nil, "seed \(seed): \(cluster.checker.violation ?? "")")
        return cluster
    }

    @Test(arguments: [3, 11, 29] as [UInt64])
    func tracingChangesNoOutcomeNorOrder(seed: UInt64) {
        let plain = Self.run(seed: seed, traced: false)
        let traced = Self.run(seed: seed, traced: true)
        #expect(plain.checker.order == traced.checker.order, "seed \(seed): the total order differs")
        #expect(plain.checker.acknowledged == traced.checker.acknowledged, "seed \(seed): the answered sequences differ")
        #expect(plain.checker.answers.mapValues(\.sequence) == traced.checker.answers.mapValues(\.sequence))
        #expect(plain.checker.answers.mapValues(\.outcomes) == traced.checker.answers.mapValues(\.outcomes))
        #expect(plain.clients.map(\.tracedAnswers).reduce(0, +) == 0)
        #expect(traced.clients.map(\.tracedAnswers).reduce(0, +) > 0, "seed \(seed): no answer carried a waterfall")
    }
}
