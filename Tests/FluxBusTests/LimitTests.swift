import Flux
import Foundation
import FluxBusProtocol
import FluxStores
import Testing
import ZeroMQ

@testable import FluxBus

@Suite("Join limits", .timeLimit(.minutes(1)))
struct LimitTests {
    @Test func aWorkerWithTooManyStoresOrOneWorkerTooManyIsRefused() async throws {
        let bus = try await TestBus {
            $0.maxStoresPerWorker = 1
            $0.maxWorkers = 1
        }
        let client = try await bus.client()
        let (wide, wideTask) = bus.startWorker("wide", [HostedStore(KVStore.self, name: "a"), HostedStore(KVStore.self, name: "b")])
        let error = await #expect(throws: BusError.self) { try await wideTask.value }
        #expect(error?.message.contains("at most 1 per worker") == true)
        var refusals: [Message.Reject.Code] = []
        for await event in wide.events { if case .rejected(let code, _) = event { refusals.append(code) } }
        #expect(refusals == [.tooMany])

        bus.startWorker("first", [HostedStore(CounterStore.self)])
        try await bus.waitUntilLive(1, client: client)
        let (_, secondTask) = bus.startWorker("second", [HostedStore(CounterStore.self)])
        let second = await #expect(throws: BusError.self) { try await secondTask.value }
        #expect(second?.message.contains("its limit") == true)
        #expect(try await client.status().workers.map(\.id) == ["first"])
        await client.close()
        await bus.stop()
    }

    @Test func aPayloadOverTheLimitIsRefusedWithTheLimitNamed() async throws {
        let bus = try await TestBus { $0.maxPayloadBytes = 100 }
        let client = try await bus.client()
        let error = await #expect(throws: BusError.self) {
            try await client.dispatch("kv.set", json: #"{"key":"k","value":"\#(String(repeating: "x", count: 200))"}"#)
        }
        #expect(error?.remoteCode == .invalidRequest)
        #expect(error?.message.contains("over this coordinator's limit of 100 bytes (--max-payload-bytes)") == true)
        #expect(try await client.dispatch("kv.set", json: #"{"key":"k","value":1}"#).sequence == 1)
        await client.close()
        await bus.stop()
    }

    /// A peer that floods the ROUTER with garbage is quarantined: even its valid requests go unanswered, while
    /// everyone else is served.
    @Test func aPeerSendingTooManyMalformedMessagesIsQuarantined() async throws {
        let bus = try await TestBus { $0.maxMalformedPerSecond = 50 }
        let client = try await bus.client()
        let (context, endpoint) = (bus.context, bus.control)
        let answered = try await onDedicatedThread { () -> Bool in
            let noisy = try ZMQSocket(.dealer, context: context)
            defer { noisy.close() }
            try noisy.set(.linger, to: .zero)
            try noisy.set(.routingID, to: Array("noisy".utf8))
            try noisy.connect(endpoint)
            for index in 0..<300 { _ = try noisy.send([Array("garbage \(index)".utf8)]) }
            _ = try noisy.send(Codec().encode(.statusRequest(.init(requestID: "after"))))
            return try noisy.receive(timeout: .seconds(1)) != nil
        }
        #expect(!answered, "a quarantined peer was answered")
        // Everyone else is still served: a dispatch from another client completes.
        #expect(try await client.dispatch("noop").sequence == 1)
        await client.close()
        await bus.stop()
    }

    /// Promise 3 past compaction: a replica that joins after the log dropped old entries starts from its store's
    /// snapshot, then replays the rest, and ends with the same state and digest as the replica that saw everything.
    @Test func aReplicaJoiningAfterCompactionStartsFromTheSnapshot() async throws {
        let bus = try await TestBus { $0.retain = 5 }
        let client = try await bus.client()
        bus.startWorker("w1", [HostedStore(CounterStore.self)])
        try await bus.waitUntilLive(1, client: client)
        for _ in 0..<20 { try await client.dispatch(Action(CounterStore.add, .init(by: 1))) }

        // Compaction needs a snapshot from the live replica; it follows within a few ticks.
        var status = try await client.status()
        let deadline = ContinuousClock.now.advanced(by: .seconds(5))
        while status.logOldest <= 1, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
            status = try await client.status()
        }
        #expect(status.logOldest > 1, "the log was not compacted: \(status.logOldest)")
        #expect(status.stores.first { $0.name == "counter" }?.snapshotSequence ?? 0 >= status.logOldest - 1)
        try await client.dispatch(Action(CounterStore.add, .init(by: 1)))

        bus.startWorker("late", [HostedStore(CounterStore.self)])
        try await bus.waitUntilLive(2, client: client)
        let result = try await client.dispatch(Action(CounterStore.add, .init(by: 1)))
        let digests = Set(result.outcomes.map(\.digest))
        #expect(result.outcomes.count == 2 && digests.count == 1, "\(result.outcomes)")
        let late = try await client.status().stores.first { $0.name == "counter" }?.replicas.first { $0.worker == "late" }
        #expect(late?.lastApplied == 22)
        await client.close()
        await bus.stop()
    }

    /// A state larger than one message may carry streams in chunks (docs/PROTOCOL.md, "Transfers"): the client PULLs
    /// the rest through the coordinator and gets all of it, checked against its size and checksum.
    @Test func aStateLargerThanOneMessageStreamsWhole() async throws {
        // Each of these dispatches digests megabytes of state: a debug build on a busy machine takes longer than the
        // test bus's usual 400 ms heartbeat deadline.
        let bus = try await TestBus { $0.heartbeatInterval = .seconds(1) }
        let client = try await bus.client()
        bus.startWorker("w1", [HostedStore(KVStore.self)])
        try await bus.waitUntilLive(1, client: client)
        let chunk = String(repeating: "x", count: 1_000_000)
        for index in 0..<9 {
            try await client.dispatch(Action(KVStore.set, .init(key: "k\(index)", value: .string(chunk))))
        }
        let state = try await client.state(of: "kv")
        #expect(state.size > UInt64(Limits.default.maxBytesField))
        #expect(UInt64(state.state.count) == state.size)
        #expect(StateDigest.fnv1a64(state.state) == state.checksum)
        let entries = try JSONDecoder().decode([String: String].self, from: Data(state.state))
        #expect(entries.count == 9 && entries["k8"] == chunk)
        await client.close()
        await bus.stop()
    }
}
