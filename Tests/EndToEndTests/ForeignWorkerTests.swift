import FluxBus
import FluxBusProtocol
import FluxStores
import Foundation
import Testing

/// A worker written in Python from `docs/PROTOCOL.md` alone (`Tests/ForeignWorker/fluxbus_worker.py`) joins a real
/// coordinator beside a Swift worker hosting the same counter store. Both replicas must acknowledge every dispatch
/// with the same digest, which holds only if the Python worker applies each action once, in order, and writes its
/// state byte for byte as Swift's `JSONEncoder` does.
@Suite("A Python worker written from PROTOCOL.md", .serialized, .timeLimit(.minutes(1)))
struct ForeignWorkerTests {
    /// The harness's heartbeat (``Cluster/heartbeatMilliseconds``), stated here because these tests rely on it: a
    /// busy machine must not make a worker lost.
    static let coordinatorOptions = ["--heartbeat-ms", "\(Cluster.heartbeatMilliseconds)"]

    @Test("Python and Swift replicas of one counter report equal digests for 200 dispatches")
    func pythonAndSwiftAgree() async throws {
        _ = try await Cluster.requirePython()
        let cluster = try Cluster()
        try cluster.startCoordinator(Self.coordinatorOptions)
        try await cluster.startPythonWorker("py1", store: "counter")
        let swift = try cluster.startWorker("sw1", stores: ["counter=counter"])
        let client = try await cluster.client()
        try await cluster.waitUntilLive(2, client: client)

        let run = try await Self.dispatchAdds(200, from: 0, client: client, expecting: ["py1", "sw1"])
        #expect(run.problems.isEmpty, "\(run.problems.prefix(10).joined(separator: "\n"))\n\(cluster.allLogs())")
        let expected = try Self.counterState(run.total)

        let status = try await client.status()
        let replicas = try #require(status.stores.first { $0.name == "counter" }?.replicas)
        #expect(Set(replicas.map(\.worker)) == ["py1", "sw1"])
        for replica in replicas {
            #expect(replica.lastApplied == 200 && replica.digest == StateDigest.fnv1a64(expected), "replica \(replica)")
        }
        #expect(status.stores.first { $0.name == "counter" }?.divergedAt == 0)

        try await Self.expectPythonAloneHolds(run.total, at: 200, after: swift, client: client, cluster: cluster)

        await Self.finish(client: client, cluster: cluster)
    }

    @Test("A Python worker that joins after 50 dispatches catches up by replay and then matches the Swift replica")
    func lateJoinerCatchesUp() async throws {
        _ = try await Cluster.requirePython()
        let (cluster, swift, client) = try await Self.busWithSwiftReplica()

        let before = try await Self.dispatchAdds(50, from: 0, client: client, expecting: ["sw1"])
        #expect(before.problems.isEmpty, "\(before.problems.prefix(10).joined(separator: "\n"))\n\(cluster.allLogs())")

        try await cluster.startPythonWorker("py1", store: "counter")
        try await cluster.waitUntilLive(2, client: client)
        let joined = try await client.status().workers.first { $0.id == "py1" }
        #expect(joined?.state == .live)
        #expect(joined?.lastApplied == 50, "py1 went live without replaying the 50 dispatches\n\(cluster.allLogs())")

        let after = try await Self.dispatchAdds(30, from: before.total, client: client, expecting: ["py1", "sw1"])
        #expect(after.problems.isEmpty, "\(after.problems.prefix(10).joined(separator: "\n"))\n\(cluster.allLogs())")

        try await Self.expectPythonAloneHolds(after.total, at: 80, after: swift, client: client, cluster: cluster)

        await Self.finish(client: client, cluster: cluster)
    }

    @Test("A Python worker that joins after compaction starts from a SNAPSHOT in chunks and then matches the Swift replica")
    func lateJoinerStartsFromAChunkedSnapshot() async throws {
        _ = try await Cluster.requirePython()
        let cluster = try Cluster()
        // Chunks of 4 bytes: the counter's state, `{"value":N}`, spans several, so the Python worker PULLs the rest.
        try cluster.startCoordinator(Self.coordinatorOptions + ["--retain", "4", "--chunk-bytes", "4"])
        let swift = try cluster.startWorker("sw1", stores: ["counter=counter"])
        let client = try await cluster.client()
        try await cluster.waitUntilLive(1, client: client)

        let before = try await Self.dispatchAdds(30, from: 0, client: client, expecting: ["sw1"])
        #expect(before.problems.isEmpty, "\(before.problems.prefix(10).joined(separator: "\n"))\n\(cluster.allLogs())")
        try await LargeSnapshotTests.waitUntil("the log is compacted", cluster: cluster) { try await client.status().logOldest > 1 }

        try await cluster.startPythonWorker("py1", store: "counter")
        try await cluster.waitUntilLive(2, client: client)
        #expect(cluster.log("py1").contains("restored counter from a snapshot"), "\(cluster.log("py1"))")
        let after = try await Self.dispatchAdds(10, from: before.total, client: client, expecting: ["py1", "sw1"])
        #expect(after.problems.isEmpty, "\(after.problems.prefix(10).joined(separator: "\n"))\n\(cluster.allLogs())")

        try await Self.expectPythonAloneHolds(after.total, at: 40, after: swift, client: client, cluster: cluster)
        await Self.finish(client: client, cluster: cluster)
    }

    @Test("A Python worker that joins while dispatches stream applies each exactly once")
    func joinsWhileDispatchesStream() async throws {
        _ = try await Cluster.requirePython()
        let (cluster, swift, client) = try await Self.busWithSwiftReplica()
        var run = try await Self.dispatchAdds(100, from: 0, client: client, expecting: ["sw1"])
        var sequence: UInt64 = 100

        // Keep dispatching while the Python worker joins, until it is live (or for at most 3 s).
        try await cluster.startPythonWorker("py1", store: "counter")
        var live = false
        let deadline = ContinuousClock.now.advanced(by: .seconds(3))
        while !live, ContinuousClock.now < deadline {
            for _ in 0..<20 {
                let by = Int.random(in: -9...9)
                let result = try await client.dispatch("counter.add", json: "{\"by\":\(by)}")
                run.total += by
                sequence = result.sequence
                if !result.outcomes.contains(where: { $0.worker == "sw1" && $0.status == .ok }) {
                    run.problems.append("#\(result.sequence): \(result.outcomes)")
                }
            }
            live = try await client.status().workers.first { $0.id == "py1" }?.state == .live
        }
        #expect(run.problems.isEmpty, "\(run.problems.prefix(10).joined(separator: "\n"))\n\(cluster.allLogs())")
        #expect(live, "py1 sent READY but the coordinator never counted it")
        let after = try await Self.dispatchAdds(20, from: run.total, client: client, expecting: ["py1", "sw1"])
        #expect(after.problems.isEmpty, "\(after.problems.prefix(10).joined(separator: "\n"))\n\(cluster.allLogs())")
        run.total = after.total
        sequence += 20

        // The Python worker applied every dispatch exactly once, in order.
        try await Self.expectPythonAloneHolds(run.total, at: sequence, after: swift, client: client, cluster: cluster)

        await Self.finish(client: client, cluster: cluster)
    }

    // MARK: - Helpers

    /// Dispatches `count` `counter.add` actions with varying `by` (negative ones too), checking each result: it
    /// succeeded, with one `ok` outcome per expected worker, all with the digest of the expected state.
    /// A coordinator and the Swift replica `sw1` of `counter`, live, with a client.
    static func busWithSwiftReplica() async throws -> (Cluster, Process, BusClient) {
        let cluster = try Cluster()
        try cluster.startCoordinator(coordinatorOptions)
        let swift = try cluster.startWorker("sw1", stores: ["counter=counter"])
        let client = try await cluster.client()
        try await cluster.waitUntilLive(1, client: client)
        return (cluster, swift, client)
    }

    static func dispatchAdds(
        _ count: Int, from start: Int, client: BusClient, expecting workers: Set<String>
    ) async throws -> (total: Int, problems: [String]) {
        var total = start
        var problems: [String] = []
        for index in 1...count {
            let by = (index * 7919) % 23 - 11
            total += by
            let result = try await client.dispatch("counter.add", json: "{\"by\":\(by)}")
            let ok = result.outcomes.filter { $0.status == .ok }
            let digest = StateDigest.fnv1a64(try counterState(total))
            if !result.succeeded || ok.count != workers.count || Set(ok.map(\.worker)) != workers
                || !ok.allSatisfy({ $0.digest == digest })
            {
                problems.append("#\(result.sequence) by \(by): expected digest \(digest) from \(workers.sorted()), got \(result.outcomes)")
            }
        }
        return (total, problems)
    }

    /// The counter's canonical state bytes, as the Swift store writes them.
    static func counterState(_ value: Int) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(CounterStore.State(value: value)))
    }

    /// Stops the Swift replica, then checks that py1, the one live replica left, holds exactly `total` as of
    /// `sequence`: Swift's bytes and digest for that state, from the Python worker's own STATE.
    static func expectPythonAloneHolds(
        _ total: Int, at sequence: UInt64, after swift: Process, client: BusClient, cluster: Cluster
    ) async throws {
        try await stop(swift, leaving: "sw1", client: client, cluster: cluster)
        let state = try await client.state(of: "counter")
        let expected = try counterState(total)
        #expect(state.worker == "py1")
        #expect(state.sequence == sequence)
        #expect(state.state == expected, "py1 says \(String(decoding: state.state, as: UTF8.self))")
        #expect(state.digest == StateDigest.fnv1a64(expected))
    }

    /// Closes the client and stops the cluster: every process must exit 0.
    static func finish(client: BusClient, cluster: Cluster) async {
        await client.close()
        let exits = await cluster.stop()
        #expect(exits == ["coordinator": 0, "py1": 0, "sw1": 0], "\(cluster.allLogs())")
    }

    /// SIGTERMs one worker and waits until it has exited and the coordinator no longer counts it.
    static func stop(_ process: Process, leaving worker: String, client: BusClient, cluster: Cluster) async throws {
        process.terminate()
        let deadline = ContinuousClock.now.advanced(by: .seconds(10))
        while ContinuousClock.now < deadline {
            let state = try await client.status().workers.first { $0.id == worker }?.state
            if !process.isRunning, state != .live, state != .catchingUp { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw ClusterError("worker \(worker) did not leave within 10 s\n\(cluster.allLogs())")
    }
}
