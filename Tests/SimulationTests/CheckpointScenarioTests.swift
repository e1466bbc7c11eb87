@testable import FluxBus
import Testing

/// The log's periodic checkpoint (`syncIfBatched`), which a `try?` once hid: in batch mode it is the log's sync, and
/// a coordinator whose log no longer syncs must stop as it does when a sync fails; a failed WAL truncation in the
/// other modes loses nothing, and the coordinator goes on.
@Suite("Simulated checkpoint failures")
struct CheckpointScenarioTests {
    @Test func aBatchSyncThatFailsStopsTheCoordinatorAndLosesNothing() {
        let cluster = SimCluster(seed: 8, faults: .nothing, actionsPerClient: 6)
        cluster.run(until: 60_000_000) { $0.checker.acknowledged.count >= 3 }
        cluster.disk.checkpointFailure = BusError(code: .storage, message: "simulated: the WAL checkpoint failed")
        let stopped = cluster.run(until: cluster.now + 2_000_000) { $0.coordinator == nil }
        #expect(stopped, "the coordinator stopped at the tick whose sync failed")
        #expect(cluster.disk.failedCheckpoints == 1, "it stopped at the first failure")
        cluster.disk.checkpointFailure = nil
        #expect(ScenarioTests.settle(cluster), "\(cluster.checker.recentSteps.suffix(10))")
        #expect(cluster.checker.violation == nil, "\(cluster.checker.violation ?? "")")
        #expect(cluster.checker.acknowledged.count == 18, "every action of the three clients answered after the restart")
    }

    @Test func aTruncationThatFailsIsReportedAndTheBusGoesOn() {
        let cluster = SimCluster(seed: 8, faults: .nothing, actionsPerClient: 6)
        cluster.run(until: 60_000_000) { $0.checker.acknowledged.count >= 3 }
        let coordinator = cluster.coordinator
        cluster.disk.checkpointFailure = ActionLog.CheckpointFailure(description: "simulated: SQLITE_IOERR")
        #expect(ScenarioTests.settle(cluster), "\(cluster.checker.recentSteps.suffix(10))")
        #expect(cluster.coordinator === coordinator, "the same coordinator, never stopped")
        #expect(cluster.disk.failedCheckpoints > 1, "reported at every tick, not only once")
        #expect(cluster.checker.violation == nil, "\(cluster.checker.violation ?? "")")
        #expect(cluster.checker.acknowledged.count == 18, "every action of the three clients answered")
    }
}
