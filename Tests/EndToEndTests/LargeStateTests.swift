import Foundation
import Flux
import FluxBus
import FluxBusProtocol
import FluxStores
import Testing

/// A dispatch costs the same whatever the size of the state: a long `kv` batch on two replicas runs through, every
/// action ok, and the replicas end with equal digests that are the digests of the state they hold.
@Suite("Large states", .timeLimit(.minutes(3)))
struct LargeStateTests {
    @Test func aHundredThousandActionBatchOnTwoReplicasIsAllOkAndTheReplicasAgree() async throws {
        let cluster = try Cluster()
        try cluster.startCoordinator(["--in-memory"])
        _ = try cluster.startWorker("w1", stores: ["kv=kv"])
        _ = try cluster.startWorker("w2", stores: ["kv=kv"])
        let client = try await cluster.client(timeout: .seconds(30))
        defer { Task { await client.close() } }
        try await cluster.waitUntilLive(2, client: client)

        // 100,000 sets over 60,000 keys: the later 40,000 overwrite, so the digest must take members out as well.
        let keys = 60_000
        let lines = (0..<100_000).map { #"{"key":"k\#($0 % keys)","value":{"n":\#($0),"tag":"t\#($0 % 7)"}}"# }
        let input = try BatchInputTests.write(lines, in: cluster)
        let run = try CommandLineTests.fluxbus(
            ["dispatch", "kv.set", "--batch", "--json", "--coordinator", cluster.control, "--timeout", "60"], input: input)
        #expect(run.status == 0, "\(run.error)")
        let batches = try run.output.split(separator: "\n").map {
            try JSONDecoder().decode(DispatchCommandBatchLine.self, from: Data($0.utf8))
        }
        #expect(batches.count == 100)
        #expect(batches.reduce(0) { $0 + $1.count } == 100_000)
        #expect(batches.allSatisfy { $0.failures.isEmpty }, "every action ok")

        // One more action: both replicas acknowledge it with the same digest…
        let check = try await client.dispatch(Action(KVStore.set, .init(key: "last", value: .bool(true))))
        #expect(check.succeeded)
        let digests = Set(check.outcomes.map(\.digest))
        #expect(check.outcomes.count == 2 && digests.count == 1, "\(check.outcomes)")
        // …which is the digest of the state a replica holds, computed here from its bytes.
        let state = try await client.state(of: "kv")
        let held = try KVState(json: state.state)
        #expect(held.count == keys + 1)
        #expect(held["k39999"] == .object(["n": .number(99_999), "tag": .string("t\(99_999 % 7)")]), "the last set of a key wins")
        #expect(digests == [held.stateDigest])
        #expect(state.digest == held.stateDigest)
        await cluster.stop()
    }
}

/// One line of `dispatch --batch --json`.
struct DispatchCommandBatchLine: Decodable {
    struct Failure: Decodable { let seq: UInt64 }
    let firstSeq: UInt64
    let count: Int
    let failures: [Failure]
}
