@testable import FluxBus
import FluxBusProtocol
import Testing

/// Replicas that take longer than the ack timeout (5 s) to encode a state before they answer, as a store of
/// hundreds of megabytes does (found by a real-process probe: 3,000,000 keys could never be read, and the log was
/// never compacted, with the default settings). The first answer to a state request gets `--state-timeout`.
@Suite("Simulation: slow state encoding")
struct SlowEncodeScenarioTests {
    /// Encoding takes 6 to 7 s: a client's read through the coordinator and a compaction snapshot both succeed, and
    /// nothing is counted malformed.
    @Test func aStateSlowerToEncodeThanTheAckTimeoutIsReadAndSnapshotted() {
        let cluster = SimCluster(seed: 11, faults: .nothing, actionsPerClient: 40)
        cluster.encodeTime = 6_000_000...7_000_000
        cluster.reader.patience = 10_000_000
        cluster.run(until: 150_000_000) {
            $0.checker.acknowledged.count == 120 && ($0.disk.oldestSequence ?? 1) > 1 && $0.reader.reads >= 2
        }
        #expect(cluster.checker.violation == nil, "\(cluster.checker.violation ?? "")")
        #expect(cluster.reader.reads >= 2, "the state was read through the coordinator")
        #expect((cluster.disk.oldestSequence ?? 1) > 1, "the log was compacted from the replicas' snapshots")
        #expect(cluster.disk.snapshots[SimLedger.name] != nil)
        #expect(cluster.coordinator?.policing.malformed == 0)
        #expect(ScenarioTests.settle(cluster), "\(cluster.checker.recentSteps.suffix(10))")
        #expect(cluster.checker.violation == nil, "\(cluster.checker.violation ?? "")")
    }

    /// With a state timeout shorter than the encoding, every answer comes late: the reads and the snapshots time
    /// out, but the late STATEs are dropped quietly, the replicas stay live, and the coordinator can say which replica
    /// it asked when it explains why the log is not compacted.
    @Test func aLateStateIsNotMalformed() throws {
        let cluster = SimCluster(seed: 11, faults: .nothing, actionsPerClient: 40, stateTimeout: .seconds(3))
        cluster.encodeTime = 6_000_000...7_000_000
        cluster.reader.patience = 10_000_000
        cluster.run(until: 60_000_000)
        #expect(cluster.checker.violation == nil, "\(cluster.checker.violation ?? "")")
        let coordinator = try #require(cluster.coordinator)
        #expect(cluster.reader.reads == 0, "every read timed out")
        #expect((cluster.disk.oldestSequence ?? 1) == 1, "no snapshot arrived in time, so nothing was compacted")
        #expect(coordinator.policing.malformed == 0, "late answers were counted malformed")
        #expect(coordinator.membership.workers.values.allSatisfy { $0.state == .live }, "a replica was lost")
        let why = coordinator.whyNoSnapshot(of: SimLedger.name)
        #expect(why.contains("asked `w") && why.contains("did not arrive"), "\(why)")
    }
}
