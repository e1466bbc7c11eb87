import Flux
@testable import FluxBus
import FluxBusProtocol
import Testing

/// Every result of a store with dependencies says what it read of them (`readDigest`, PROTOCOL.md Appendix F), and
/// the coordinator holds it to the outcomes it recorded before it tells anyone of the dispatch. Here w4, an audit
/// replica, is handed a RELEASE the coordinator never sent (the ledger `ok` with a count of 999) before the real one
/// for the next dispatch: the first record counts, so its audit runs on that.
@Suite("Simulated replicas that ran on an outcome the coordinator never released")
struct MisreadScenarioTests {
    /// A cluster that has answered a few requests, with the forged RELEASE on its way to w4; and its sequence.
    static func forgedRelease(mutation: PlantedBug? = nil) -> (SimCluster, UInt64) {
        let cluster = SimCluster(seed: 4, faults: .nothing, actionsPerClient: 10, mutation: mutation)
        cluster.run(until: 60_000_000) { $0.checker.acknowledged.count >= 3 }
        let coordinator = cluster.coordinator!
        let sequence = coordinator.lastSequence + 1
        let forged = Message.release(.init(epoch: coordinator.epoch, sequence: sequence, outputs: [
            StoreOutput(store: SimLedger.name, status: .ok, output: Array(#"{"count":999}"#.utf8)),
        ]))
        cluster.checker.note("a forged RELEASE #\(sequence) to w4")
        cluster.deliver(.toWorker(3, cluster.codec.encode(forged), fromSubscriber: false, generation: cluster.workers[3].generation), link: 9)
        return (cluster, sequence)
    }

    /// The coordinator stops, naming the replica, before anyone is told of the dispatch.
    @Test func aReplicaThatRanOnAnotherOutcomeStopsTheCoordinator() {
        let (cluster, sequence) = Self.forgedRelease()
        let stopped = cluster.run(until: 60_000_000) { !$0.storageStops.isEmpty }
        #expect(stopped, "\(cluster.checker.recentSteps.suffix(12))")
        #expect(cluster.checker.violation == nil, "\(cluster.checker.violation ?? "")")
        let stop = cluster.storageStops.first ?? ""
        #expect(stop.contains("store `audit` on worker `w4` applied #\(sequence) reading outcomes"), "\(stop)")
        #expect(cluster.checker.acknowledged[sequence] == nil, "no client was told of #\(sequence)")
    }

    /// The recovery the error gives: the operator restarts w4 empty, it replays the log's history, the restarted
    /// coordinator goes on, and every request is answered with the audit's replicas agreeing.
    @Test func anOperatorRecoversByRestartingTheReplicaNamedEmpty() {
        let (cluster, sequence) = Self.forgedRelease()
        cluster.operatorRestartsMisreadReplicas = true
        #expect(ScenarioTests.settle(cluster, within: 60), "\(cluster.checker.recentSteps.suffix(12))")
        #expect(cluster.checker.violation == nil, "\(cluster.checker.violation ?? "")")
        #expect(cluster.storageStops.count == 1, "\(cluster.storageStops)")
        #expect(cluster.restartedEmptyByOperator == 1, "w4 started over")
        #expect(cluster.checker.acknowledged[sequence] != nil, "#\(sequence) answered once w4 started over")
        #expect(cluster.checker.acknowledged.count == 30, "every action answered")
    }

    /// The control: a coordinator that does not check answers for the dispatch. In this run the ledger refused that
    /// id, so the client is told the audit was skipped, which w4, its audit run on the forged `ok`, belies.
    @Test func withoutTheCheckTheAnswerIsUntrue() {
        let (cluster, sequence) = Self.forgedRelease(mutation: .coordinatorIgnoresWhatDependentsRead)
        _ = ScenarioTests.settle(cluster)
        #expect(cluster.storageStops.isEmpty)
        let violation = cluster.checker.violation ?? ""
        #expect(violation.contains("was told audit did not apply #\(sequence), but w4 applied it"), "\(violation)")
    }
}
