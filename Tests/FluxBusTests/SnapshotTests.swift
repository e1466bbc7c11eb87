import Flux
import Foundation
import FluxBusProtocol
import FluxStores
import Testing
import ZeroMQ

@testable import FluxBus

/// A history computed by an in-process ``Hub``: the REPLAY entries a coordinator would have recorded for it, and
/// every store's canonical state after each sequence (index 0: the initial states).
struct ReferenceHistory {
    var entries: [ReplayEntry] = []
    var states: [[String: [UInt8]]] = []

    init(_ types: [any Store.Type], _ actions: [AnyAction], epoch: UInt64 = 1) throws {
        let hub = Hub()
        try hub.register(types)
        let stores = types.map { hub.anyStore(named: $0.name)! }
        states.append(try Dictionary(uniqueKeysWithValues: stores.map { ($0.name, try $0.encodedState()) }))
        for (index, action) in actions.enumerated() {
            let report = try hub.dispatch(action)
            let planned = stores.filter { $0.handles(action.name) }
            let names = Set(planned.map(\.name))
            entries.append(ReplayEntry(
                epoch: epoch, sequence: UInt64(index + 1), actionType: action.name, payload: try action.encodedPayload(),
                plan: planned.map { PlanStep(store: $0.name, waitsFor: $0.dependencies.filter(names.contains)) },
                outputs: try planned.map {
                    StoreOutput(store: $0.name, status: report[$0.name] == .ok ? .ok : .failed, output: try $0.encodedOutput())
                }))
            states.append(try Dictionary(uniqueKeysWithValues: stores.map { ($0.name, try $0.encodedState()) }))
        }
    }

    /// What a coordinator answers to a FETCH: the entries of `from...to` up to `last`, and `before` more before
    /// `from` (which a worker must skip).
    func replay(_ fetch: Message.Fetch, last: UInt64, epoch: UInt64, before: UInt64 = 0) -> Message {
        let first = fetch.from > before ? fetch.from - before : 1
        return .replay(.init(epoch: epoch, entries: entries.filter { (first...min(fetch.to, last)).contains($0.sequence) }))
    }

    /// A SNAPSHOT of a store after `sequence`, with the right digest unless told otherwise.
    func snapshot(_ store: String, at sequence: UInt64, epoch: UInt64, digest: UInt64? = nil) -> Message {
        let state = states[Int(sequence)][store]!
        return .snapshot(.init(
            epoch: epoch, store: store, sequence: sequence, digest: digest ?? StateDigest.fnv1a64(state), state: state))
    }
}

/// What a worker told the hand-played coordinator.
struct RawExchange: Sendable {
    var hellos: [Message.Hello] = []
    var fetches: [Message.Fetch] = []
    var ready: Message.Ready?
    var states: [String: Message.State] = [:]
}

@Suite("Snapshots: a joining worker starts stores from the coordinator's snapshots", .timeLimit(.minutes(1)))
struct SnapshotTests {
    static let epoch: UInt64 = 7

    static func adds(_ values: [Int]) -> [AnyAction] {
        values.map { AnyAction(Action(CounterStore.add, .init(by: $0))) }
    }

    static func orders(_ quantities: [Int]) -> [AnyAction] {
        quantities.map { AnyAction(Action(Orders.place, .init(qty: $0))) }
    }

    /// Plays the coordinator for one worker: answers each HELLO with `onHello`, each FETCH with `onFetch`, heartbeats
    /// on PUB (at `head`) until the worker says READY, then asks for the state of each of `stores`.
    static func play(
        _ coordinator: RawCoordinator, head: UInt64, stores: [String], onHello: @escaping @Sendable () -> [Message],
        onFetch: @escaping @Sendable (Message.Fetch) -> [Message]
    ) async throws -> RawExchange {
        try await onDedicatedThread {
            var exchange = RawExchange()
            var worker: [UInt8]?
            let deadline = ContinuousClock.now + .seconds(20)
            while exchange.ready == nil, ContinuousClock.now < deadline {
                if worker != nil { try coordinator.publish(.heartbeat(.init(epoch: epoch, sequence: head))) }
                guard let (from, message) = try coordinator.receive(timeout: .milliseconds(20)) else { continue }
                switch message {
                case .hello(let hello):
                    exchange.hellos.append(hello)
                    worker = from
                    for answer in onHello() { try coordinator.send(answer, to: from) }
                case .fetch(let fetch):
                    exchange.fetches.append(fetch)
                    for answer in onFetch(fetch) { try coordinator.send(answer, to: from) }
                case .ready(let ready):
                    exchange.ready = ready
                default:
                    break
                }
            }
            guard let worker, exchange.ready != nil else {
                throw PollTimeout(description: "the worker did not become ready; it sent \(exchange)")
            }
            for store in stores {
                try coordinator.send(.stateRequest(.init(requestID: "state-\(store)", store: store)), to: worker)
                while exchange.states[store] == nil, ContinuousClock.now < deadline {
                    if case .state(let state)? = try coordinator.receive(timeout: .milliseconds(50))?.message,
                        state.requestID == "state-\(store)"
                    {
                        exchange.states[store] = state
                    }
                }
            }
            return exchange
        }
    }

    /// Stops a worker gracefully and returns what it reported.
    static func finish(_ worker: Worker, _ task: Task<Void, any Error>) async throws -> [WorkerEvent] {
        worker.stop()
        try await task.value
        return await collect(worker.events)
    }

    static func applied(_ events: [WorkerEvent], _ store: String) -> [UInt64] {
        events.compactMap { if case .applied(let sequence, store, .ok) = $0 { sequence } else { nil } }
    }

    static func installed(_ events: [WorkerEvent]) -> [String] {
        events.compactMap { if case .snapshotInstalled(let store, let sequence) = $0 { "\(store)@\(sequence)" } else { nil } }
    }

    /// The STATE a replica reports must be the reference state after `sequence`, with its digest.
    static func expect(_ state: Message.State?, equals history: ReferenceHistory, at sequence: UInt64) {
        guard let state else {
            Issue.record("no STATE")
            return
        }
        let expected = history.states[Int(sequence)][state.store]!
        #expect(text(state) == String(decoding: expected, as: UTF8.self), "store \(state.store)")
        #expect(state.digest == StateDigest.fnv1a64(expected))
        #expect(state.sequence == sequence)
    }

    /// SNAPSHOT at 6 before WELCOME 10, then a REPLAY that also holds 5 and 6: the worker fetches from 7, applies
    /// 7...10 only, and ends in the state of a counter that applied all ten. A second SNAPSHOT for the store, further
    /// on but with a wrong digest, is dropped (else the worker would fetch from 9).
    @Test func aSnapshotThenTheRestOfTheHistory() async throws {
        let history = try ReferenceHistory([CounterStore.self], Self.adds(Array(1...10)), epoch: Self.epoch)
        let coordinator = try RawCoordinator()
        let (worker, task) = coordinator.startWorker("w1", [HostedStore(CounterStore.self)])
        let exchange = try await Self.play(coordinator, head: 10, stores: ["counter"]) {
            [history.snapshot("counter", at: 6, epoch: Self.epoch),
             history.snapshot("counter", at: 8, epoch: Self.epoch, digest: 12_345),
             coordinator.welcome(epoch: Self.epoch, sequence: 10)]
        } onFetch: { [history.replay($0, last: 10, epoch: Self.epoch, before: 2)] }
        let events = try await Self.finish(worker, task)
        coordinator.close()

        #expect(exchange.hellos.first?.stores.first?.lastApplied == 0)
        #expect(exchange.fetches.first?.from == 7)
        #expect(exchange.ready?.lastApplied == 10)
        Self.expect(exchange.states["counter"], equals: history, at: 10)
        #expect(Self.applied(events, "counter") == [7, 8, 9, 10])
        #expect(Self.installed(events) == ["counter@6"])
    }

    /// Only a SNAPSHOT with a wrong digest: it is dropped, and the worker replays the whole history instead.
    @Test func aSnapshotWithAWrongDigestIsDropped() async throws {
        let history = try ReferenceHistory([CounterStore.self], Self.adds(Array(1...10)), epoch: Self.epoch)
        let coordinator = try RawCoordinator()
        let (worker, task) = coordinator.startWorker("w1", [HostedStore(CounterStore.self)])
        let exchange = try await Self.play(coordinator, head: 10, stores: ["counter"]) {
            [history.snapshot("counter", at: 8, epoch: Self.epoch, digest: 12_345),
             coordinator.welcome(epoch: Self.epoch, sequence: 10)]
        } onFetch: { [history.replay($0, last: 10, epoch: Self.epoch)] }
        let events = try await Self.finish(worker, task)
        coordinator.close()

        #expect(exchange.fetches.first?.from == 1)
        Self.expect(exchange.states["counter"], equals: history, at: 10)
        #expect(Self.applied(events, "counter") == Array(1...10))
        #expect(Self.installed(events).isEmpty)
    }

    /// An empty SNAPSHOT means "the store did not exist at that sequence": its state becomes the initial one. Here it
    /// answers a FETCH while the worker catches up, after a first snapshot had given the counter a value of 50.
    @Test func anEmptySnapshotRestoresTheInitialState() async throws {
        let early = try ReferenceHistory([CounterStore.self], Self.adds([20, 30]), epoch: Self.epoch)
        let history = try ReferenceHistory([CounterStore.self], Self.adds([1, 1, 1, 1, 9]), epoch: Self.epoch)
        let coordinator = try RawCoordinator()
        let (worker, task) = coordinator.startWorker("w1", [HostedStore(CounterStore.self)])
        let exchange = try await Self.play(coordinator, head: 5, stores: ["counter"]) {
            [early.snapshot("counter", at: 2, epoch: Self.epoch), coordinator.welcome(epoch: Self.epoch, sequence: 5)]
        } onFetch: { fetch in
            fetch.from <= 4
                ? [.snapshot(.init(epoch: Self.epoch, store: "counter", sequence: 4, digest: 0, state: []))]
                : [history.replay(fetch, last: 5, epoch: Self.epoch)]
        }
        let events = try await Self.finish(worker, task)
        coordinator.close()

        #expect(exchange.fetches.map(\.from) == [3, 5])
        #expect(Self.installed(events) == ["counter@2", "counter@4"])
        #expect(Self.applied(events, "counter") == [5])
        #expect(exchange.states["counter"].map(text) == #"{"value":9}"#)
        #expect(exchange.states["counter"]?.sequence == 5)
    }

    /// A worker hosting `check` and `ledger` (which waits for `check`), with snapshots at 6 and 3. It fetches from 4;
    /// `check` does not run 4...6, and `ledger` reads `check`'s recorded output for them from the REPLAY.
    @Test func storesWithDifferentSnapshotSequences() async throws {
        let history = try ReferenceHistory([CheckStore.self, LedgerStore.self], Self.orders(Array(1...8)), epoch: Self.epoch)
        let coordinator = try RawCoordinator()
        let (worker, task) = coordinator.startWorker("w1", [HostedStore(CheckStore.self), HostedStore(LedgerStore.self)])
        let exchange = try await Self.play(coordinator, head: 8, stores: ["check", "ledger"]) {
            [history.snapshot("check", at: 6, epoch: Self.epoch), history.snapshot("ledger", at: 3, epoch: Self.epoch),
             coordinator.welcome(epoch: Self.epoch, sequence: 8)]
        } onFetch: { [history.replay($0, last: 8, epoch: Self.epoch)] }
        let events = try await Self.finish(worker, task)
        coordinator.close()

        #expect(exchange.fetches.first?.from == 4)
        #expect(Self.applied(events, "check") == [7, 8])
        #expect(Self.applied(events, "ledger") == [4, 5, 6, 7, 8])
        Self.expect(exchange.states["check"], equals: history, at: 8)
        Self.expect(exchange.states["ledger"], equals: history, at: 8)
        #expect(Self.installed(events).sorted() == ["check@6", "ledger@3"])
    }

    /// A SNAPSHOT for a store the worker does not host, or arriving when the worker is live, is dropped.
    @Test func aSnapshotOutsideAJoinIsDropped() async throws {
        let history = try ReferenceHistory([CounterStore.self], Self.adds([4, 5]), epoch: Self.epoch)
        let stranger = try ReferenceHistory([CheckStore.self], Self.orders([3]), epoch: Self.epoch)
        let coordinator = try RawCoordinator()
        let (worker, task) = coordinator.startWorker("w1", [HostedStore(CounterStore.self)])
        let exchange = try await Self.play(coordinator, head: 2, stores: []) {
            [stranger.snapshot("check", at: 1, epoch: Self.epoch), coordinator.welcome(epoch: Self.epoch, sequence: 2)]
        } onFetch: { [history.replay($0, last: 2, epoch: Self.epoch)] }
        #expect(exchange.ready?.lastApplied == 2)
        // Live now: a snapshot that would take the counter to 9 must not be installed.
        let state = try await onDedicatedThread { () -> Message.State? in
            let id = Array("w1".utf8)
            try coordinator.send(history.snapshot("counter", at: 1, epoch: Self.epoch), to: id)
            try coordinator.send(.snapshot(.init(
                epoch: Self.epoch, store: "counter", sequence: 9, digest: StateDigest.fnv1a64(Array(#"{"value":99}"#.utf8)),
                state: Array(#"{"value":99}"#.utf8))), to: id)
            try coordinator.send(.stateRequest(.init(requestID: "after", store: "counter")), to: id)
            while let (_, message) = try coordinator.receive(timeout: .seconds(5)) {
                if case .state(let state) = message { return state }
            }
            return nil
        }
        let events = try await Self.finish(worker, task)
        coordinator.close()

        #expect(state.map(text) == #"{"value":9}"#)
        #expect(state?.sequence == 2)
        #expect(Self.installed(events).isEmpty)
    }
}
