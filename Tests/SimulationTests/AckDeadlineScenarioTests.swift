import Flux
@testable import FluxBus
import FluxBusProtocol
import Testing

/// The acknowledgement deadline writes off only replicas that could have answered. Found outside the simulator: a
/// real run (LostDependencyTests, in a fresh CI clone) lost a healthy dependent along with its dead dependency when
/// both deadlines fell on one tick. Here the ack deadline (300 ms) comes before the liveness deadline (400 ms), so it
/// is the ack deadline that finds the ledger's replicas dead while the audit's replicas wait for its RELEASE.
@Suite("Simulated ack deadlines")
struct AckDeadlineScenarioTests {
    @Test(arguments: Array(UInt64(31)...40))
    func aReplicaWaitingForADependencysReleaseIsNotWrittenOff(seed: UInt64) {
        let cluster = SimCluster(seed: seed, faults: .nothing, actionsPerClient: 10, ackTimeout: .milliseconds(300))
        cluster.run(until: 60_000_000) { cluster in
            cluster.checker.acknowledged.count >= 4
                && cluster.coordinator?.membership.workers.values.filter { $0.state == .live }.count == 4
        }
        // Every ledger replica dies for good (w1 and w2); the audit's replicas (w3, w4) are healthy.
        for index in [0, 1] {
            cluster.retired.insert(index)
            cluster.crashWorker(index)
        }
        var lost: Set<String> = []
        cluster.run(until: cluster.now + 5_000_000) { cluster in
            for worker in cluster.coordinator?.membership.workers.values ?? [:].values where worker.state == .lost {
                lost.insert(worker.id)
            }
            return false
        }
        #expect(lost.contains("w1") && lost.contains("w2"), "the dead ledger replicas were written off: \(lost.sorted())")
        #expect(!lost.contains("w3") && !lost.contains("w4"), "a healthy audit replica was written off: \(lost.sorted())")
        #expect(ScenarioTests.settle(cluster), "\(cluster.checker.recentSteps.suffix(10))")
        #expect(cluster.checker.violation == nil, "\(cluster.checker.violation ?? "")")
    }
}
