@testable import Flux
import Testing

/// Records which of its handlers ran: `named.set` has one of its own, every other action reaches the fallback.
private final class RouteStore: Store {
    static let name = "route"
    static let set = ActionType<Int>("named.set")
    static let handlers = Handlers<RouteStore>()
        .on(set) { store, action, _ in store.state.append("own \(action.payload)") }
        .onAnyAction { store, action, _ in store.state.append("fallback \(action.name)") }
    var state: [String] = []
}

/// One async handler beside a synchronous one.
private final class AwaitingStore: Store {
    static let name = "awaiting"
    static let fetch = ActionType<Int>("awaiting.fetch")
    static let set = ActionType<Int>("awaiting.set")
    static let handlers = Handlers<AwaitingStore>()
        .on(fetch) { store, action, _ in
            await Task.yield()
            store.state = action.payload
        }
        .on(set) { store, action, _ in store.state = action.payload }
    var state = 0
}

@Suite("AnyStore: a store's handlers behind a uniform face")
struct AnyStoreTests {
    private func run(_ store: AnyStore, _ names: [String]) throws -> [Bool] {
        try names.map { name in
            let context = DispatchContext(sequence: 1, store: store.name, dependencies: [], outputs: [:], cascade: { _ in })
            return try store.apply(AnyAction(name: name, json: Array("1".utf8)), context: context)
        }
    }

    /// Unlimited, the fallback takes every action without a handler of its own.
    @Test func everyActionReachesItsOwnHandlerOrTheFallback() throws {
        let route = RouteStore()
        let ran = try run(AnyStore(route), ["named.set", "other", "named.set"])
        #expect(ran == [true, true, true])
        #expect(route.state == ["own 1", "fallback other", "own 1"])
    }

    /// Limited to some action types (`--store NAME=KIND,handles=…`), only those reach it: the named one its own
    /// handler, a listed one without a handler of its own the fallback, and no other.
    @Test func aLimitedStoreRunsOnlyTheListedActions() throws {
        let route = RouteStore()
        let store = AnyStore(route, limitedTo: ["named.set", "listed"])
        let ran = try run(store, ["named.set", "listed", "other"])
        #expect(ran == [true, true, false])
        #expect(route.state == ["own 1", "fallback listed"])
        #expect(!store.isAsync("listed"))
    }

    /// A store limited away from its async handler has none: the worker and the hub ask no further.
    @Test func aStoreLimitedAwayFromItsAsyncHandlerHasNone() {
        let whole = AnyStore(AwaitingStore())
        #expect(whole.hasAsyncHandlers)
        #expect(whole.isAsync("awaiting.fetch") && !whole.isAsync("awaiting.set"))
        let limited = AnyStore(AwaitingStore(), limitedTo: ["awaiting.set"])
        #expect(!limited.hasAsyncHandlers)
        #expect(!limited.isAsync("awaiting.fetch") && !limited.isAsync("awaiting.set"))
    }
}
