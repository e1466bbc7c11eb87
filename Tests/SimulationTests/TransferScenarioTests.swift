import Flux
@testable import FluxBus
import FluxBusProtocol
import Testing

/// Snapshots and STATEs cut off mid-stream (docs/PROTOCOL.md, "Transfers"): a half-transferred snapshot is never
/// recorded by the coordinator nor installed by a worker, and the normal retry path brings a whole one later.
@Suite("Simulation: transfers")
struct TransferScenarioTests {
    /// The coordinator crashes while a snapshot round's STATE arrives in chunks: what it wrote of it is dropped when
    /// it restarts, the previous snapshot stands, and a later round records a whole one.
    @Test func aCoordinatorCrashMidTransferRecordsNoHalfSnapshot() throws {
        let cluster = SimCluster(seed: 5, faults: .nothing, actionsPerClient: 40)
        cluster.crashesCoordinatorOn = { _, messages in
            messages.contains { if case .chunk(let chunk) = $0 { chunk.offset > 0 } else { false } }
        }
        cluster.run(until: 200_000_000) {
            $0.crashesCoordinatorOn == nil && $0.checker.acknowledged.count == 120 && ($0.disk.oldestSequence ?? 1) > 1
        }
        #expect(cluster.crashesCoordinatorOn == nil, "the coordinator crashed mid-transfer")
        #expect(cluster.checker.violation == nil, "\(cluster.checker.violation ?? "")")
        #expect(cluster.disk.incompleteSnapshotsRecorded.isEmpty)
        let snapshot = try #require(cluster.disk.snapshots[SimLedger.name], "a later round recorded a snapshot")
        let bytes = try #require(cluster.disk.bytes(of: SimLedger.name, at: snapshot.sequence))
        #expect(UInt64(bytes.count) == snapshot.size && snapshot.size > UInt64(SimCluster.chunkBytes))
        #expect(StateDigest.fnv1a64(bytes) == snapshot.checksum)
        // Only the recorded snapshot's chunks stay.
        #expect(cluster.disk.chunks[SimLedger.name]?.keys.sorted() == [snapshot.sequence])
        #expect(ScenarioTests.settle(cluster), "\(cluster.checker.recentSteps.suffix(10))")
        #expect(cluster.checker.violation == nil, "\(cluster.checker.violation ?? "")")
    }

    /// A replica joining from a snapshot crashes while its chunks arrive: nothing of it was installed, and once
    /// restarted it joins again, receives the whole snapshot, and ends equal to the other replica.
    @Test func aWorkerCrashMidSnapshotInstallsNothingAndJoinsAgain() {
        let cluster = SimCluster(seed: 3, faults: .nothing, actionsPerClient: 30, workersDown: [1])
        cluster.run(until: 120_000_000) { $0.checker.acknowledged.count == 90 && ($0.disk.oldestSequence ?? 1) > 1 }
        #expect((cluster.disk.oldestSequence ?? 1) > 1, "the log was compacted")
        cluster.retired = []
        let chunksBefore = cluster.checker.transfers["CHUNK from the coordinator", default: 0]
        cluster.startWorker(1, withCheckpoint: false)
        // Step by step (a chunk's round trip takes well under a millisecond), to stop just after the third chunk.
        let limit = cluster.now + 5_000_000
        var midStream = false
        while cluster.now < limit, !midStream {
            cluster.run(until: cluster.now + 50)
            midStream = cluster.checker.transfers["CHUNK from the coordinator", default: 0] >= chunksBefore + 3
        }
        #expect(midStream, "the snapshot travels in chunks")
        #expect(ScenarioTests.ledger(cluster, 1) == [], "nothing is installed before the last chunk")
        #expect(cluster.checker.transfers["snapshots installed", default: 0] == 0)
        cluster.crashWorker(1)
        cluster.startWorker(1, withCheckpoint: false)
        #expect(ScenarioTests.settle(cluster), "\(cluster.checker.recentSteps.suffix(10))")
        #expect(cluster.checker.violation == nil, "\(cluster.checker.violation ?? "")")
        #expect(ScenarioTests.ledger(cluster, 1) == ScenarioTests.ledger(cluster, 0))
        #expect((ScenarioTests.ledger(cluster, 1)?.count ?? 0) > 0)
        #expect(cluster.checker.transfers["snapshots installed", default: 0] > 0)
    }
}
