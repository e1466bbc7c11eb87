import Foundation
import FluxBus
import FluxBusProtocol
import Testing

@Suite("Counting on three replicas", .timeLimit(.minutes(1)))
struct CountingTests {
    /// Three worker processes each host `counter`; four concurrent clients send 10,000 `counter.add`. Nothing is
    /// lost or applied twice: every replica ends at exactly 10,000, with equal digests, and, since a total cannot
    /// tell a duplicate plus a miss from neither, each replica's journal lists the 10,000 sequences once, in order.
    @Test func tenThousandAddsFromFourClientsReachEveryReplicaOnce() async throws {
        let cluster = try Cluster()
        try cluster.startCoordinator()
        func journal(_ id: String) -> URL { cluster.directory.appendingPathComponent("\(id).journal") }
        for id in ["r1", "r2", "r3"] {
            try cluster.startWorker(id, stores: ["counter=counter"], extra: ["--log-level", "warning", "--journal", journal(id).path])
        }
        let probe = try await cluster.client()
        try await cluster.waitUntilLive(3, client: probe)

        let results = try await withThrowingTaskGroup(of: [DispatchResult].self) { group in
            for _ in 0..<4 {
                group.addTask {
                    let client = try await cluster.client(timeout: .seconds(30))
                    var results: [DispatchResult] = []
                    for _ in 0..<2_500 { results.append(try await client.dispatch("counter.add", json: #"{"by":1}"#)) }
                    await client.close()
                    return results
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        #expect(results.count == 10_000)
        #expect(results.allSatisfy { $0.succeeded && $0.outcomes.count == 3 && Set($0.outcomes.map(\.digest)).count == 1 })
        let sequences = results.map(\.sequence).sorted()
        #expect(Set(sequences).count == 10_000)
        #expect(sequences.last! - sequences.first! == 9_999, "sequences have gaps")

        let status = try await probe.status()
        let replicas = try #require(status.stores.first { $0.name == "counter" }).replicas
        #expect(replicas.count == 3)
        let expectedDigest = StateDigest.fnv1a64(Array(#"{"value":10000}"#.utf8))
        for replica in replicas {
            #expect(replica.digest == expectedDigest, "\(replica.worker) does not hold {\"value\":10000}")
            #expect(replica.lastApplied == sequences.last!)
        }
        let state = try await probe.state(of: "counter")
        #expect(String(decoding: state.state, as: UTF8.self) == #"{"value":10000}"#)
        await probe.close()
        let statuses = await cluster.stop()
        #expect(statuses.values.allSatisfy { $0 == 0 }, "exit statuses \(statuses)\n\(cluster.allLogs())")
        for id in ["r1", "r2", "r3"] {
            let applied = try JournalEntry.read(journal(id))
            #expect(applied.map(\.sequence) == sequences, "\(id) applied \(KVHistory.describe(applied.map(\.sequence)))")
            #expect(applied.allSatisfy { $0.status == "ok" })
        }
    }
}
