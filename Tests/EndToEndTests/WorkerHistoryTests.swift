import Foundation
import FluxBus
import FluxBusProtocol
import FluxBusTools
import Testing

/// Issue 14: workers' HELLO carries what they applied (sequence, log chain and, since protocol version 7, the epoch
/// of the entry applied last), and a coordinator with a durable log that is behind a worker, whose chain at the
/// worker's sequence differs, or that recorded that entry in a later epoch, stops (exit 5) with the recovery
/// procedure instead of renumbering; with `--new-bus` it refuses the worker (REJECT 9) instead. Real processes, with
/// the worker's checkpoint as its memory of what it applied.
@Suite("A coordinator behind its workers", .serialized, .timeLimit(.minutes(1)))
struct WorkerHistoryTests {
    /// A coordinator on `data` and the worker w1 keeping its checkpoint in `checkpoints`: `count` kv.set of the given
    /// values, then a graceful stop, which writes the checkpoint.
    static func history(_ cluster: Cluster, run: String, data: URL, checkpoints: URL, values: Int, count: Int) async throws {
        try cluster.start("coordinator-\(run)", ["coordinator", "--control", cluster.control, "--publish", cluster.publish,
                                                 "--heartbeat-ms", "\(Cluster.heartbeatMilliseconds)", "--data-dir", data.path])
        try cluster.startWorker("w1", stores: ["kv=kv"], extra: ["--data-dir", checkpoints.path])
        let client = try await cluster.client()
        try await cluster.waitUntilLive(1, client: client)
        for index in 1...count {
            let result = try await client.dispatch("kv.set", json: #"{"key":"k","value":\#(index + values)}"#)
            #expect(result.succeeded && result.sequence == UInt64(index))
        }
        await client.close()
        let statuses = await cluster.stop()
        #expect(statuses.values.allSatisfy { $0 == 0 }, "\(statuses)")
    }

    /// Starts a coordinator on `data` and w1 from its checkpoint, and waits for the coordinator to exit.
    static func coordinatorStops(_ cluster: Cluster, run: String, data: URL, checkpoints: URL) async throws -> (Int32, String) {
        let coordinator = try cluster.start(
            "coordinator-\(run)", ["coordinator", "--control", cluster.control, "--publish", cluster.publish,
                                   "--heartbeat-ms", "\(Cluster.heartbeatMilliseconds)", "--data-dir", data.path])
        try cluster.startWorker("w1", stores: ["kv=kv"], extra: ["--data-dir", checkpoints.path])
        let deadline = ContinuousClock.now.advanced(by: .seconds(20))
        while coordinator.isRunning, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
        let running = coordinator.isRunning
        await cluster.stop()
        #expect(!running, "the coordinator kept serving a worker ahead of its log\n\(cluster.allLogs())")
        return (coordinator.terminationStatus, cluster.log("coordinator-\(run)"))
    }

    @Test func aCoordinatorWhoseNewLogIsBehindAWorkerStopsWithExitFive() async throws {
        let cluster = try Cluster()
        let checkpoints = cluster.directory.appendingPathComponent("w1-data")
        try await Self.history(cluster, run: "old", data: cluster.directory.appendingPathComponent("old"), checkpoints: checkpoints,
                               values: 0, count: 20)
        // The data directory is gone (a new disk, a wrong path): the new one starts a bus, and w1 shows it is behind.
        let (status, log) = try await Self.coordinatorStops(
            cluster, run: "new", data: cluster.directory.appendingPathComponent("new"), checkpoints: checkpoints)
        #expect(status == 5, "\(log)")
        for part in ["a worker applied what the log does not hold", "worker `w1` applied up to #20",
                     "log ends at #0", "--new-bus", "OPERATIONS.md"] {
            #expect(log.contains(part), "the coordinator's log does not say \(part):\n\(log)")
        }

        // --new-bus: the worker is refused instead (REJECT 9, exit 4), and its checkpoint stays as it was.
        let checkpoint = try Data(contentsOf: checkpoints.appendingPathComponent("w1.checkpoint"))
        try cluster.start("coordinator-new-bus", ["coordinator", "--control", cluster.control, "--publish", cluster.publish,
                                                  "--data-dir", cluster.directory.appendingPathComponent("new").path, "--new-bus"])
        let worker = try await cluster.run(
            "refused", ["worker", "--id", "w1", "--store", "kv=kv", "--data-dir", checkpoints.path, "--coordinator", cluster.control],
            within: .seconds(20))
        #expect(!worker.timedOut && worker.status == 4, "\(worker)")
        #expect(worker.error.contains("applied up to #20"), "\(worker)")
        #expect(try Data(contentsOf: checkpoints.appendingPathComponent("w1.checkpoint")) == checkpoint)
        let statuses = await cluster.stop()
        #expect(statuses["coordinator-new-bus"] == 0, "\(statuses)")
    }

    /// w1 applies twenty actions on bus `a`; a second run logs twenty more, of `values`, on bus `b`; then a
    /// coordinator on `b` meets w1 from its checkpoint, and must stop (exit 5). Returns that coordinator's log.
    static func anotherRunStops(_ cluster: Cluster, values: Int) async throws -> String {
        let checkpoints = cluster.directory.appendingPathComponent("w1-data")
        try await history(cluster, run: "a", data: cluster.directory.appendingPathComponent("a"), checkpoints: checkpoints,
                          values: 0, count: 20)
        try await history(cluster, run: "b", data: cluster.directory.appendingPathComponent("b"),
                          checkpoints: cluster.directory.appendingPathComponent("other-w1-data"), values: values, count: 20)
        let (status, log) = try await coordinatorStops(
            cluster, run: "b-again", data: cluster.directory.appendingPathComponent("b"), checkpoints: checkpoints)
        #expect(status == 5, "\(log)")
        return log
    }

    @Test func aWorkerWhoseChainDiffersFromTheLogStopsTheCoordinator() async throws {
        // Another bus of the same length, other values: sequence numbers alone cannot tell the two apart.
        let log = try await Self.anotherRunStops(try Cluster(), values: 1_000)
        for part in ["worker `w1` applied through #20 with chain", "its history differs", "--new-bus"] {
            #expect(log.contains(part), "the coordinator's log does not say \(part):\n\(log)")
        }
    }

    /// The same twenty actions, logged by another run under a later epoch: the chain at #20 matches, but w1 applied
    /// its #20 in an earlier epoch than the log recorded it in, so it applied another entry (a log that lost its tail
    /// and had the same actions retried into it looks like this). The coordinator stops rather than welcome it; the
    /// worker's checkpoint kept the epoch across its restart (protocol version 7).
    @Test func aWorkerThatAppliedAnEntryTheLogLoggedAgainStopsTheCoordinator() async throws {
        let log = try await Self.anotherRunStops(try Cluster(), values: 0)
        for part in ["worker `w1` applied #20 in epoch", "recorded its #20 in epoch", "logged another there", "--new-bus"] {
            #expect(log.contains(part), "the coordinator's log does not say \(part):\n\(log)")
        }
        #expect(!log.contains("its history differs"), "the chains match: only the epoch tells the two apart\n\(log)")
    }
}
