import Flux
import Foundation
import FluxBusProtocol
import FluxStores
import Testing

@testable import FluxBus

@Suite("Queueing: one dispatch at a time, a bounded queue, busy past it", .timeLimit(.minutes(1)))
struct QueueTests {
    /// Dispatches all sent at once, each reported as its result or its refusal.
    static func dispatchAtOnce(_ count: Int, clients: [BusClient]) async -> [(n: Int, outcome: Result<DispatchResult, BusError>)] {
        await withTaskGroup(of: (n: Int, outcome: Result<DispatchResult, BusError>).self) { group in
            for n in 0..<count {
                let client = clients[n % clients.count]
                group.addTask {
                    do {
                        return (n, .success(try await client.dispatch(Action(SlowStore.work, .init(n: n)))))
                    } catch let error as BusError {
                        return (n, .failure(error))
                    } catch {
                        return (n, .failure(BusError(code: .protocolViolation, message: "unexpected \(error)")))
                    }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
    }

    /// With room for two behind the one in flight and a handler that takes 30 ms, most of twenty dispatches sent at
    /// once are refused as busy; every one accepted completes, each with its own sequence, in the order the store
    /// applied them.
    /// A batch larger than the whole queue could never be taken: it is refused as invalid, saying what to send
    /// instead, rather than as busy, which a client would retry forever (found by a probe with `--queue-limit 100`).
    @Test func aBatchLargerThanTheQueueIsRefusedAsInvalid() async throws {
        let bus = try await TestBus { $0.queueLimit = 2 }
        let client = try await bus.client()
        bus.startWorker("w1", [HostedStore(SlowStore.self)])
        try await bus.waitUntilLive(1, client: client)
        let work = BatchAction(actionType: "slow.work", payload: Array(#"{"n":1}"#.utf8))
        let error = await #expect(throws: BusError.self) { try await client.dispatchBatch([work, work, work]) }
        #expect(error?.remoteCode == .invalidRequest, "\(String(describing: error))")
        #expect(error?.message.contains("can never fit this coordinator's queue of 2 actions") == true, "\(String(describing: error))")
        #expect(try await client.dispatchBatch([work, work]).failures.isEmpty, "a batch that fits is taken")
        await client.close()
        await bus.stop()
    }

    /// An empty request id names no request: the client refuses it before sending, and the coordinator refuses it
    /// too (ERROR 2, nothing logged), as PROTOCOL.md says; taken as "no id", each retry under it was applied again.
    @Test func anEmptyRequestIDIsRefused() async throws {
        let bus = try await TestBus()
        let client = try await bus.client()
        let byClient = await #expect(throws: BusError.self) { try await client.dispatch("slow.work", json: #"{"n":1}"#, requestID: "") }
        #expect(byClient?.code == .usage && byClient?.message.contains("request id is empty") == true, "\(String(describing: byClient))")
        await client.close()
        await bus.stop()

        let engine = try HistoryConflictTests.engine(newBus: false)
        let dispatch = Message.dispatch(.init(requestID: "", actionType: "slow.work", payload: Array(#"{"n":1}"#.utf8)))
        engine.handle(.message([Array("client".utf8)] + Codec().encode(dispatch), userID: nil), at: .zero)
        let answers = StateBeyondTheLogTests.sent(by: engine, to: Array("client".utf8))
        guard case .error(let refused)? = answers.first else { Issue.record("no ERROR: \(answers)"); return }
        #expect(refused.code == .invalidRequest && refused.message.contains("request id is empty"), "\(refused)")
        #expect(engine.lastLogged == 0, "nothing logged")
    }

    @Test func pastTheQueueLimitDispatchesAreRefusedAsBusy() async throws {
        let bus = try await TestBus { $0.queueLimit = 2 }
        let first = try await bus.client()
        let second = try await bus.client()
        bus.startWorker("w-slow", [HostedStore(SlowStore.self)])
        try await bus.waitUntilLive(1, client: first)

        let outcomes = await Self.dispatchAtOnce(20, clients: [first, second])
        var accepted: [(n: Int, result: DispatchResult)] = []
        var refused: [BusError] = []
        for (n, outcome) in outcomes {
            switch outcome {
            case .success(let result): accepted.append((n, result))
            case .failure(let error): refused.append(error)
            }
        }
        #expect(!refused.isEmpty)
        #expect(accepted.count >= 1)
        #expect(accepted.count + refused.count == 20)
        for error in refused {
            #expect(error.code == .refused)
            #expect(error.remoteCode == .busy)
            #expect(error.message.contains("busy"))
        }
        #expect(accepted.allSatisfy { $0.result.succeeded && $0.result.outcomes.count == 1 })
        let inOrder = accepted.sorted { $0.result.sequence < $1.result.sequence }
        #expect(Set(inOrder.map(\.result.sequence)).count == accepted.count, "sequences are unique")
        let firstSequence = try #require(inOrder.first?.result.sequence)
        #expect(inOrder.map(\.result.sequence) == Array(firstSequence..<firstSequence + UInt64(accepted.count)))

        // The store applied exactly the accepted dispatches, in sequence order.
        let state = try decode([Int].self, try await first.state(of: "slow"))
        #expect(state == inOrder.map(\.n))

        // Busy is not a lasting state: once drained, the bus takes dispatches again.
        let status = try await first.status()
        #expect(status.queueLength == 0)
        let later = try await first.dispatch(Action(SlowStore.work, .init(n: 99)))
        #expect(later.succeeded)
        #expect(later.sequence == status.sequence + 1)

        await second.close()
        await first.close()
        await bus.stop()
    }

    /// Under the limit nothing is refused: dispatches sent together wait their turn, and the status shows them
    /// queued behind the one in flight.
    @Test func dispatchesWaitBehindTheOneInFlight() async throws {
        let bus = try await TestBus()
        let client = try await bus.client()
        let observer = try await bus.client()
        bus.startWorker("w-slow", [HostedStore(SlowStore.self)])
        try await bus.waitUntilLive(1, client: client)

        let sending = Task { await Self.dispatchAtOnce(6, clients: [client]) }
        var deepest: UInt32 = 0
        for _ in 0..<1_000 {
            let status = try await observer.status()
            deepest = max(deepest, status.queueLength)
            if deepest >= 3 || status.sequence >= 6 { break }
            try await Task.sleep(for: .milliseconds(5))
        }
        let outcomes = await sending.value
        #expect(deepest >= 3, "the status showed at most \(deepest) dispatches queued or in flight")
        #expect(deepest <= 6)

        let results = try outcomes.map { try $0.outcome.get() }
        #expect(results.map(\.sequence).sorted() == Array(1...6))
        let state = try decode([Int].self, try await client.state(of: "slow"))
        let byN = Dictionary(uniqueKeysWithValues: outcomes.map { ($0.n, try! $0.outcome.get().sequence) })
        #expect(state == byN.sorted { $0.value < $1.value }.map(\.key))
        #expect(try await observer.status().queueLength == 0)

        await observer.close()
        await client.close()
        await bus.stop()
    }
}

@Suite("Cascades: handlers that dispatch", .timeLimit(.minutes(1)))
struct CascadeTests {
    /// `relay` dispatches `counter.add` from its handler. The cascaded action is queued, not run inside the
    /// dispatch that caused it: `counter` applies it as the next sequence.
    @Test(arguments: [false, true])
    func aCascadeRunsAsTheNextDispatch(counterOnTheSameWorker: Bool) async throws {
        let bus = try await TestBus()
        let client = try await bus.client()
        let counterWorker: (worker: Worker, task: Task<Void, any Error>)
        if counterOnTheSameWorker {
            counterWorker = bus.startWorker("w1", [HostedStore(RelayStore.self), HostedStore(CounterStore.self)])
        } else {
            bus.startWorker("w1", [HostedStore(RelayStore.self)])
            counterWorker = bus.startWorker("w2", [HostedStore(CounterStore.self)])
        }
        try await bus.waitUntilLive(counterOnTheSameWorker ? 1 : 2, client: client)

        let ping = try await client.dispatch(Action(RelayStore.ping, .init(by: 7)))
        #expect(ping.succeeded)
        #expect(ping.stores.map(\.name) == ["relay"])

        _ = try await client.status(until: "the cascade completed") { $0.sequence >= ping.sequence + 1 }
        let counter = try await client.state(of: "counter")
        #expect(text(counter) == #"{"value":7}"#)
        #expect(counter.sequence == ping.sequence + 1)

        let marker = try await client.dispatch("marker")
        #expect(marker.sequence == ping.sequence + 2, "exactly one cascaded dispatch ran in between")

        await client.close()
        await bus.stop()
        let applied = await appliedSequences(counterWorker.worker.events, store: "counter")
        #expect(applied == [ping.sequence + 1])
    }

    /// A store's handler runs on every replica, but the action it dispatches is one action, as it is under a
    /// `Hub`: two replicas of `relay` must not add twice.
    @Test func aCascadeFromAReplicatedStoreIsDispatchedOnce() async throws {
        let bus = try await TestBus()
        let client = try await bus.client()
        bus.startWorker("w1", [HostedStore(RelayStore.self)])
        bus.startWorker("w2", [HostedStore(RelayStore.self)])
        bus.startWorker("w3", [HostedStore(CounterStore.self)])
        try await bus.waitUntilLive(3, client: client)

        let ping = try await client.dispatch(Action(RelayStore.ping, .init(by: 7)))
        #expect(ping.outcomes.count == 2)
        // Both replicas sent their cascade before acknowledging, so anything dispatched now comes after it.
        let marker = try await client.dispatch("marker")
        #expect(marker.sequence == ping.sequence + 2)
        #expect(text(try await client.state(of: "counter")) == #"{"value":7}"#)

        await client.close()
        await bus.stop()
    }

    /// A replica that catches up by replay re-runs the handler; the action it dispatched the first time must not be
    /// dispatched again.
    @Test func replayDoesNotDispatchACascadeAgain() async throws {
        let bus = try await TestBus()
        let client = try await bus.client()
        bus.startWorker("w1", [HostedStore(RelayStore.self)])
        bus.startWorker("w3", [HostedStore(CounterStore.self)])
        try await bus.waitUntilLive(2, client: client)

        let ping = try await client.dispatch(Action(RelayStore.ping, .init(by: 7)))
        _ = try await client.status(until: "the cascade completed") { $0.sequence >= ping.sequence + 1 }

        bus.startWorker("w2", [HostedStore(RelayStore.self)])
        _ = try await client.status(until: "w2 is live") { $0.worker("w2")?.state == .live }
        // w2 replayed the ping before it said READY, so any cascade it sent is queued ahead of this marker.
        let marker = try await client.dispatch("marker")
        #expect(marker.sequence == ping.sequence + 2)
        #expect(text(try await client.state(of: "counter")) == #"{"value":7}"#)

        await client.close()
        await bus.stop()
    }
}
