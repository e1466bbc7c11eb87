import Foundation
import FluxBus
import FluxBusProtocol
import Testing

/// A state larger than one message (8 MiB) travels in chunks between real processes (docs/PROTOCOL.md, "Transfers").
@Suite("Large snapshots across processes", .timeLimit(.minutes(1)))
struct LargeSnapshotTests {
    /// A `kv` store over 8 MiB on one replica; a small `--retain` makes the coordinator take a snapshot of it (in
    /// chunks, into its log) and compact. A late replica then joins from that snapshot, and once the first replica
    /// has left, `fluxbus state` served by the late one prints exactly the bytes the first one gave.
    @Test func aLateReplicaJoinsFromASnapshotLargerThanOneMessage() async throws {
        let cluster = try Cluster()
        // Each dispatch digests megabytes of state on a debug build, on a shared machine: a longer heartbeat than the
        // tests' usual 250 ms keeps the replicas from being written off meanwhile.
        try cluster.startCoordinator([
            "--data-dir", cluster.directory.appendingPathComponent("data").path, "--retain", "4", "--heartbeat-ms", "1500",
        ])
        try cluster.startWorker("r1", stores: ["kv=kv"])
        let client = try await cluster.client(timeout: .seconds(30))
        try await cluster.waitUntilLive(1, client: client)

        let value = String(repeating: "v", count: 800_000)
        for index in 0..<12 {
            let result = try await client.dispatch("kv.set", json: #"{"key":"k\#(index)","value":"\#(value)"}"#)
            #expect(result.succeeded)
        }
        // Compaction drops history only once a snapshot of `kv` covers it.
        try await Self.waitUntil("the log is compacted", cluster: cluster) { try await client.status().logOldest > 1 }

        try cluster.startWorker("r2", stores: ["kv=kv"])
        try await cluster.waitUntilLive(2, client: client, within: .seconds(40))
        #expect(cluster.log("r2").contains("installed a snapshot"), "\(cluster.log("r2"))")
        // A replica reports its digest with its next acknowledgement: both must report the same.
        let probe = try await client.dispatch("kv.set", json: #"{"key":"probe","value":1}"#)
        #expect(probe.outcomes.count == 2 && Set(probe.outcomes.map(\.digest)).count == 1, "\(probe.outcomes)")
        let original = try await client.state(of: "kv")
        #expect(original.worker == "r1")
        #expect(original.size > UInt64(Limits.default.maxBytesField), "the state is larger than one message")

        // With r1 gone, the coordinator asks r2.
        kill(try #require(cluster.pid("r1")), SIGTERM)
        try await Self.waitUntil("r1 has left", cluster: cluster) {
            try await client.status().workers.filter { $0.state == .live }.map(\.id) == ["r2"]
        }
        let run = try CommandLineTests.fluxbus(["state", "kv", "--coordinator", cluster.control])
        #expect(run.status == 0, "\(run.error)")
        #expect(run.error.contains("kv on r2 at #\(original.sequence)"), "\(run.error)")
        #expect(original.sequence == probe.sequence)
        #expect(run.output.utf8.count == original.state.count + 1, "stdout is the state and a newline")
        #expect(Array(run.output.utf8.dropLast()) == original.state, "r2's state differs from r1's")
        await client.close()
        await cluster.stop()
    }

    static func waitUntil(
        _ what: String, cluster: Cluster, within limit: Duration = .seconds(30), _ condition: () async throws -> Bool
    ) async throws {
        let deadline = ContinuousClock.now.advanced(by: limit)
        while ContinuousClock.now < deadline {
            if (try? await condition()) == true { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw ClusterError("not within \(limit): \(what)\n" + cluster.allLogs())
    }
}
