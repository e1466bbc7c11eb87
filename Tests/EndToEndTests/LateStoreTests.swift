import Foundation
import FluxBus
import FluxBusProtocol
import Testing

/// A store new to the bus builds its state from the history (docs/PROTOCOL.md, "A store's history"), and a store the
/// bus knew, told `skipped` for a dispatch, never applies it later. Real processes.
@Suite("Stores that join late", .timeLimit(.minutes(1)))
struct LateStoreTests {
    /// The replicas of `store` once every one of them has reported a digest for sequence `sequence`.
    static func replicas(of store: String, at sequence: UInt64, client: BusClient, cluster: Cluster, count: Int) async throws -> [Replica] {
        let deadline = ContinuousClock.now.advanced(by: .seconds(15))
        while ContinuousClock.now < deadline {
            let status = try await client.status()
            let replicas = status.stores.first { $0.name == store }?.replicas ?? []
            if replicas.count == count, replicas.allSatisfy({ $0.lastApplied == sequence && $0.digest != 0 }) { return replicas }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw ClusterError("the replicas of \(store) did not all report a digest at #\(sequence)\n" + cluster.allLogs())
    }

    @Test func aCounterThatJoinsLateHoldsEveryEarlierDispatch() async throws {
        let cluster = try Cluster()
        try cluster.startCoordinator(["--in-memory"])
        let client = try await cluster.client()
        defer { Task { await client.close() } }
        // Five dispatches before any worker hosts the counter: each is answered unhandled, and says what that means.
        for by in 1...5 {
            let early = try CommandLineTests.fluxbus(["dispatch", "counter.add", #"{"by":\#(by)}"#, "--coordinator", cluster.control])
            #expect(early.status == 1, "\(early.output) \(early.error)")
            #expect(early.output.contains("#\(by) counter.add: unhandled"), "\(early.output)")
            #expect(early.output.contains("a store that joins later and handles it builds its state from it"), "\(early.output)")
            #expect(early.error.contains("a store that joins later and handles it builds its state from it"), "\(early.error)")
        }
        _ = try cluster.startWorker("w1", stores: ["counter=counter"])
        try await cluster.waitUntilLive(1, client: client)
        #expect(String(decoding: try await client.state(of: "counter").state, as: UTF8.self) == #"{"value":15}"#,
                "the counter built its state from the five dispatches before it joined")
        let live = try await client.dispatch("counter.add", json: #"{"by":100}"#)
        #expect(live.succeeded)
        let status = try CommandLineTests.fluxbus(["status", "--coordinator", cluster.control])
        #expect(status.output.contains("history: joined after #5; replayed #1…#5"), "\(status.output)")
        let json = try CommandLineTests.fluxbus(["status", "--json", "--coordinator", cluster.control])
        let object = try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any]
        let store = (object?["stores"] as? [[String: Any]])?.first { $0["name"] as? String == "counter" }
        #expect(store?["historyFrom"] as? Int == 1 && store?["historyBefore"] as? Int == 6, "\(json.output)")
        #expect(cluster.log("w1").contains("store new to the bus: building its state from the history"), "\(cluster.log("w1"))")

        // A second replica started later replays the same history and agrees with the first.
        _ = try cluster.startWorker("w2", stores: ["counter=counter"])
        try await cluster.waitUntilLive(2, client: client)
        let replicas = try await Self.replicas(of: "counter", at: live.sequence, client: client, cluster: cluster, count: 2)
        #expect(Set(replicas.map(\.digest)).count == 1, "\(replicas)")
        await cluster.stop()
    }

    @Test func aKnownStoreToldSkippedNeverAppliesThatDispatchLater() async throws {
        let cluster = try Cluster()
        try cluster.startCoordinator(["--in-memory"])
        // `stats` is on the bus from the start, waiting for `base`, which nobody hosts yet: not ready.
        _ = try cluster.startWorker("w1", stores: ["counter=counter", "stats=counter,after=base"])
        let client = try await cluster.client()
        defer { Task { await client.close() } }
        try await cluster.waitUntilLive(1, client: client)
        for _ in 1...3 {
            let result = try await client.dispatch("counter.add", json: #"{"by":1}"#)
            #expect(result.stores.first { $0.name == "stats" }?.status == .skipped)
        }
        // Now `base` joins: stats runs from here on, and never the three it was told it skipped.
        _ = try cluster.startWorker("w2", stores: ["base=counter"])
        try await cluster.waitUntilLive(2, client: client)
        let now = try await client.dispatch("counter.add", json: #"{"by":10}"#)
        #expect(now.succeeded, "\(now.stores)")
        #expect(String(decoding: try await client.state(of: "stats").state, as: UTF8.self) == #"{"value":10}"#)
        #expect(String(decoding: try await client.state(of: "counter").state, as: UTF8.self) == #"{"value":13}"#)
        // A fresh replica of stats replays the log and agrees: stats was known, so it has no history to replay.
        _ = try cluster.startWorker("w3", stores: ["stats=counter,after=base"])
        try await cluster.waitUntilLive(3, client: client)
        let replicas = try await Self.replicas(of: "stats", at: now.sequence, client: client, cluster: cluster, count: 2)
        #expect(Set(replicas.map(\.digest)).count == 1, "\(replicas)")
        // `base` itself is new to the bus: it replayed the three as its history; stats, known from the start, has none.
        #expect(String(decoding: try await client.state(of: "base").state, as: UTF8.self) == #"{"value":13}"#)
        let status = try CommandLineTests.fluxbus(["status", "--json", "--coordinator", cluster.control])
        let object = try JSONSerialization.jsonObject(with: Data(status.output.utf8)) as? [String: Any]
        let stores = object?["stores"] as? [[String: Any]] ?? []
        #expect(stores.first { $0["name"] as? String == "base" }?["historyBefore"] as? Int == 4, "\(status.output)")
        #expect(stores.first { $0["name"] as? String == "stats" }?["historyBefore"] == nil, "\(status.output)")
        await cluster.stop()
    }
}
