import FluxStores
import Testing

@testable import Flux

private final class Owner {}

private struct Note: Codable, Sendable, Equatable { var text: String }
private let noteAction = ActionType<Note>("note")
private let pingAction = ActionType<NoPayload>("ping")

/// Handles `note`, dispatching a `ping` from its handler, and fails on the note "fail".
private final class NotesStore: Store {
    static let name = "notes"
    static let handlers = Handlers<NotesStore>()
        .on(noteAction) { store, action, context in
            if action.payload.text == "fail" { throw ActionError("refused") }
            store.state.append(action.payload.text)
            if action.payload.text == "cascade" { try context.dispatch(Action(pingAction)) }
        }
    var state: [String] = []
}

/// Counts every action, whatever its name, and remembers the errors actions carried.
private final class AuditStore: Store {
    struct State: Codable, Sendable { var seen: [String] = []; var errors: [String] = [] }
    static let name = "audit"
    static let handlers = Handlers<AuditStore>().onAnyAction { store, action, _ in
        store.state.seen.append(action.name)
        if let error = action.error { store.state.errors.append(error.message) }
    }
    var state = State()
}

/// Reads an output it did not declare a dependency on.
private final class NosyStore: Store {
    static let name = "nosy"
    static let handlers = Handlers<NosyStore>().on(noteAction) { _, _, context in
        _ = try context.output(of: "country", as: CountryStore.State.self)
    }
    var state = 0
}

/// Dispatches from every handler, forever.
private final class LoopStore: Store {
    static let name = "loop"
    static let handlers = Handlers<LoopStore>().on(pingAction) { store, _, context in
        store.state += 1
        try context.dispatch(Action(pingAction))
    }
    var state = 0
}

@Suite("Hub and typed stores")
struct HubTests {
    let hub = Hub()

    @Test func theHubCreatesOwnsAndFindsStoresByType() throws {
        let created = try hub.register(CounterStore.self)
        #expect(hub.store(of: CounterStore.self) === created)
        #expect(hub.store(of: KVStore.self) == nil)
        try hub.dispatch(Action(CounterStore.add, .init(by: 3)))
        #expect(created.state.value == 3)
    }

    @Test func aCounterOverflowFailsTheActionAndKeepsTheValue() throws {
        let counter = try hub.register(CounterStore.self)
        try hub.dispatch(Action(CounterStore.add, .init(by: Int.max)))
        let report = try hub.dispatch(Action(CounterStore.add, .init(by: 1)))
        guard case .failed(let message) = report["counter"] else {
            Issue.record("expected a failure, got \(String(describing: report["counter"]))")
            return
        }
        #expect(message.contains("overflows"))
        #expect(counter.state.value == Int.max)
    }

    @Test func registeringAStoreWithAnUnknownDependencyFails() {
        let error = #expect(throws: GraphError.self) { try hub.register(CityStore.self) }
        #expect(error?.code == .unknownDependency)
        #expect(hub.store(of: CityStore.self) == nil)
    }

    @Test func onlyStoresWithAHandlerTakePart() throws {
        try hub.register(CounterStore.self)
        try hub.register(KVStore.self)
        let report = try hub.dispatch(Action(KVStore.set, .init(key: "a", value: .number(1))))
        #expect(report.outcomes.map(\.store) == ["kv"])
        #expect(hub.store(of: KVStore.self)?.state == ["a": .number(1)])
        try hub.dispatch(Action(KVStore.delete, .init(key: "a")))
        #expect(hub.store(of: KVStore.self)?.state.isEmpty == true)
    }

    @Test func anActionCarriesItsErrorToHandlersAndObservers() throws {
        try hub.register(AuditStore.self)
        let owner = Owner()
        var observed: [ActionError?] = []
        hub.observe(AuditStore.self, owner: owner) { _, error in observed.append(error) }
        try hub.dispatch(Action(pingAction, error: ActionError("upstream timed out")))
        #expect(hub.store(of: AuditStore.self)?.state.errors == ["upstream timed out"])
        #expect(observed == [ActionError("upstream timed out")])
    }

    @Test func observersHearOfChangesAndGoAwayWithTheirOwner() throws {
        try hub.register(CounterStore.self)
        var owner: Owner? = Owner()
        var values: [Int] = []
        hub.observe(CounterStore.self, owner: owner!) { store, error in
            #expect(error == nil)
            values.append(store.state.value)
        }
        #expect(hub.observerCount(for: CounterStore.self) == 1)
        try hub.dispatch(Action(CounterStore.add, .init(by: 2)))
        #expect(values == [2])

        weak let weakOwner = owner
        owner = nil
        #expect(weakOwner == nil)
        #expect(hub.observerCount(for: CounterStore.self) == 0)
        try hub.dispatch(Action(CounterStore.add, .init(by: 2)))
        #expect(values == [2])
    }

    @Test func removeObserversForgetsOneOwnerOnly() throws {
        try hub.register(CounterStore.self)
        let first = Owner()
        let second = Owner()
        var calls: [String] = []
        hub.observe(CounterStore.self, owner: first) { _, _ in calls.append("first") }
        hub.observe(CounterStore.self, owner: second) { _, _ in calls.append("second") }
        hub.removeObservers(owner: first)
        try hub.dispatch(Action(CounterStore.add, .init(by: 1)))
        #expect(calls == ["second"])
    }

    @Test func observersHearOfFailuresWithTheHandlersError() throws {
        try hub.register(NotesStore.self)
        let owner = Owner()
        var errors: [ActionError?] = []
        hub.observe(NotesStore.self, owner: owner) { _, error in errors.append(error) }
        let report = try hub.dispatch(Action(noteAction, .init(text: "fail")))
        #expect(report["notes"] == .failed("refused"))
        #expect(errors == [ActionError("refused")])
    }

    @Test func anObserverMayDispatchOnceTheDispatchIsOver() throws {
        try hub.register(CounterStore.self)
        let owner = Owner()
        hub.observe(CounterStore.self, owner: owner) { [hub] store, _ in
            if store.state.value == 1 { _ = try? hub.dispatch(Action(CounterStore.add, .init(by: 10))) }
        }
        try hub.dispatch(Action(CounterStore.add, .init(by: 1)))
        #expect(hub.store(of: CounterStore.self)?.state.value == 11)
    }

    @Test func handlersDispatchThroughTheContextAndTheActionIsQueued() throws {
        try hub.register([NotesStore.self, AuditStore.self])
        let report = try hub.dispatch(Action(noteAction, .init(text: "cascade")))
        #expect(report.cascades.map(\.action) == ["ping"])
        // The ping ran after the note had reached every store, never in the middle of it.
        #expect(hub.store(of: AuditStore.self)?.state.seen == ["note", "ping"])
        #expect(report.cascades[0].sequence == report.sequence + 1)
    }

    @Test func dispatchingFromAHandlerThroughTheHubIsRefused() throws {
        final class Rude: Store {
            nonisolated(unsafe) static var hub: Hub?
            static let name = "rude"
            static let handlers = Handlers<Rude>().on(pingAction) { _, _, _ in
                try Rude.hub?.dispatch(Action(pingAction))
            }
            var state = 0
        }
        Rude.hub = hub
        defer { Rude.hub = nil }
        try hub.register(Rude.self)
        let report = try hub.dispatch(Action(pingAction))
        #expect(report["rude"] == .failed(FluxError.dispatchInProgress.description))
    }

    @Test func endlessCascadesHitTheLimitAndNothingHangs() throws {
        try hub.register(LoopStore.self)
        hub.cascadeLimit = 50
        let report = try hub.dispatch(Action(pingAction))
        #expect(report.cascades.count == 50)
        #expect(report.cascades.last?.succeeded == false)
        #expect(hub.store(of: LoopStore.self)?.state == 51)
        // The limit is per top-level dispatch: the next one starts afresh.
        try hub.dispatch(Action(pingAction))
        #expect(hub.store(of: LoopStore.self)?.state == 102)
    }

    @Test func readingAnUndeclaredDependencyIsAClearError() throws {
        try hub.register([CountryStore.self, NosyStore.self])
        let report = try hub.dispatch(Action(noteAction, .init(text: "x")))
        guard case .failed(let message) = report["nosy"] else {
            Issue.record("expected a failure, got \(String(describing: report["nosy"]))")
            return
        }
        #expect(message.contains("add \"country\" to its dependencies"))
    }

    @Test func aPayloadFromTheWireReachesTheTypedHandler() throws {
        try hub.register(CounterStore.self)
        let report = try hub.dispatch(AnyAction(name: "counter.add", json: Array(#"{"by":5}"#.utf8)))
        #expect(report.succeeded)
        #expect(hub.store(of: CounterStore.self)?.state.value == 5)

        let bad = try hub.dispatch(AnyAction(name: "counter.add", json: Array(#"{"by":"five"}"#.utf8)))
        guard case .failed(let message) = bad["counter"] else {
            Issue.record("expected a failure")
            return
        }
        #expect(message.contains("not a valid Add"))
        #expect(hub.store(of: CounterStore.self)?.state.value == 5)
    }

    @Test func aStoreRoundTripsItsStateAsCanonicalJSON() throws {
        let store = AnyStore(KVStore.self)
        store.instance as! KVStore |> { $0.state = ["b": .string("2"), "a": .array([.bool(true), .null])] }
        let bytes = try store.encodedState()
        #expect(String(decoding: bytes, as: UTF8.self) == #"{"a":[true,null],"b":"2"}"#)
        let replica = AnyStore(KVStore.self)
        try replica.restore(fromJSON: bytes)
        #expect(try replica.encodedState() == bytes)
        #expect(throws: StoreError.self) { try replica.restore(fromJSON: Array("[1]".utf8)) }
    }

    @Test func outputsCrossAsJSONAndReadBackAsTheSameValue() throws {
        let country = AnyStore(CountryStore.self)
        (country.instance as! CountryStore).state.country = "Japan"
        let json = try #require(try country.encodedOutput())
        let context = DispatchContext(
            sequence: 1, store: "city", dependencies: ["country"], outputs: ["country": .encoded(json)],
            cascade: { _ in })
        #expect(try context.output(of: "country", as: CountryStore.State.self)?.country == "Japan")
    }
}

infix operator |>: AdditionPrecedence
private func |> <T>(value: T, body: (T) -> Void) { body(value) }
