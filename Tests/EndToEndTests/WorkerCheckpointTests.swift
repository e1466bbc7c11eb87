import Foundation
import FluxBus
import FluxBusProtocol
import Testing

/// A worker's `--data-dir` checkpoint across real restarts: resumed after SIGKILL without applying anything twice,
/// and refused (REJECT 9, ahead of log) by a coordinator whose log does not reach it.
@Suite("Worker checkpoints under real restarts", .timeLimit(.minutes(1)))
struct WorkerCheckpointTests {
    static func journal(_ cluster: Cluster, _ name: String) -> URL {
        cluster.directory.appendingPathComponent("\(name).journal")
    }

    /// The sequence in a worker's "resumed from the checkpoint … seq=N" log line.
    static func resumedSequence(_ log: String) -> UInt64? {
        guard let line = log.split(separator: "\n").first(where: { $0.contains("resumed from the checkpoint") }),
            let field = line.range(of: " seq=")
        else { return nil }
        return UInt64(line[field.upperBound...].prefix { $0.isNumber })
    }

    /// w1 checkpoints every 100 ms and is SIGKILLed; restarted on the same `--data-dir`, it resumes from the
    /// checkpoint's sequence, catches up only what follows it (its new journal starts right after that sequence:
    /// nothing is applied twice, nothing skipped), and ends with the same map as w2, which never stopped.
    @Test func aWorkerKilledAndRestartedResumesFromItsCheckpointAndAppliesNothingTwice() async throws {
        let cluster = try Cluster()
        try cluster.startCoordinator(["--ack-timeout", "1"])
        let data = cluster.directory.appendingPathComponent("w1-data")
        let w1 = { (journal: String) in
            ["--data-dir", data.path, "--checkpoint-ms", "100", "--journal", Self.journal(cluster, journal).path]
        }
        try cluster.startWorker("w1", stores: ["kv=kv"], extra: w1("w1"))
        try cluster.startWorker("w2", stores: ["kv=kv"], extra: ["--journal", Self.journal(cluster, "w2").path])
        let client = try await cluster.client()
        try await cluster.waitUntilLive(2, client: client)

        var history = KVHistory()
        for index in 1...300 { try await history.dispatch(index, client: client) }
        // Give the 100 ms checkpoint a few rounds, so that it holds the first 300 at least.
        let checkpoint = data.appendingPathComponent("w1.checkpoint")
        let written = ContinuousClock.now.advanced(by: .seconds(10))
        while !FileManager.default.fileExists(atPath: checkpoint.path), ContinuousClock.now < written {
            try await Task.sleep(for: .milliseconds(50))
        }
        try await Task.sleep(for: .milliseconds(500))
        for index in 301...500 { try await history.dispatch(index, client: client) }
        kill(try #require(cluster.pid("w1")), SIGKILL)
        for index in 501...600 { try await history.dispatch(index, client: client, timeout: .seconds(5)) }

        try cluster.startWorker("w1", stores: ["kv=kv"], extra: w1("w1-again"))
        try await history.expectReplicasHold(2, client: client, cluster: cluster)
        await client.close()
        let statuses = await cluster.stop()
        #expect(statuses["w1"] == 0 && statuses["w2"] == 0, "\(statuses)")

        let resumed = try #require(Self.resumedSequence(cluster.log("w1")), "w1 did not resume from its checkpoint\n\(cluster.log("w1"))")
        #expect((300...500).contains(resumed), "w1 resumed from #\(resumed); its checkpoint held at least #300 and at most #500")
        let beforeKill = try history.expectJournalPrefix(Self.journal(cluster, "w1"), of: "w1 before SIGKILL")
        #expect(beforeKill == 500, "w1 acknowledged #500 before it was killed but journaled \(beforeKill)")
        let again = try JournalEntry.read(Self.journal(cluster, "w1-again")).filter { $0.store == "kv" }.map(\.sequence)
        #expect(again == history.sequences.filter { $0 > resumed },
                "restarted w1 applied \(KVHistory.describe(again)) after resuming from #\(resumed)")
        try history.expectJournal(Self.journal(cluster, "w2"), of: "w2")
    }

    /// A worker whose checkpoint is at #20 joins a coordinator whose log is new (`--in-memory`): REJECT 9, and the
    /// worker exits 4 with a message that names itself, the store, both sequences and the remedy.
    @Test func aWorkerAheadOfANewLogIsRefusedAndExitsFour() async throws {
        let cluster = try Cluster()
        let data = cluster.directory.appendingPathComponent("w1-data")
        try cluster.start("old-coordinator", [
            "coordinator", "--control", cluster.control, "--publish", cluster.publish, "--in-memory",
            "--heartbeat-ms", "\(Cluster.heartbeatMilliseconds)",
        ])
        try cluster.startWorker("w1", stores: ["kv=kv"], extra: ["--data-dir", data.path])
        let client = try await cluster.client()
        try await cluster.waitUntilLive(1, client: client)
        var history = KVHistory()
        for index in 1...20 { try await history.dispatch(index, client: client) }
        await client.close()
        // A graceful stop writes the checkpoint at #20.
        let stopped = await cluster.stop()
        #expect(stopped["w1"] == 0 && stopped["old-coordinator"] == 0, "\(stopped)")

        let checkpoint = try Data(contentsOf: data.appendingPathComponent("w1.checkpoint"))
        try cluster.startCoordinator(["--in-memory"])
        let worker = try await cluster.run(
            "refused-worker", ["worker", "--id", "w1", "--store", "kv=kv", "--data-dir", data.path, "--coordinator", cluster.control],
            within: .seconds(20))
        #expect(!worker.timedOut && worker.status == 4, "\(worker)")
        for part in ["the coordinator refused worker `w1`", "store `kv` on worker `w1` applied up to #20",
                     "this coordinator's log ends at #0", "its log is in memory", "remove its --data-dir checkpoint"] {
            #expect(worker.error.contains(part), "stderr does not say \(part): \(worker)")
        }
        // REJECT code 9, by name, in the coordinator's log.
        let refusal = cluster.log("coordinator").split(separator: "\n").first { $0.contains("refused worker") }
        #expect(refusal?.contains("code=ahead of log") == true, "\(cluster.log("coordinator"))")
        // The worker did not start empty in the checkpoint's place, nor join: the file is as it was, and the
        // coordinator has no live worker.
        #expect(try Data(contentsOf: data.appendingPathComponent("w1.checkpoint")) == checkpoint)
        let statusClient = try await cluster.client()
        #expect(try await statusClient.status().workers.allSatisfy { $0.state != .live })
        await statusClient.close()
        await cluster.stop()
    }
}
