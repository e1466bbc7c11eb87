import Testing

@testable import Flux

private struct Lookup: Codable, Sendable, Equatable { var key: String }
private let lookup = ActionType<Lookup>("lookup")
private let ping = ActionType<NoPayload>("ping")

/// Stands in for a service a handler awaits.
private enum Directory {
    static func resolve(_ key: String) async throws -> String {
        try await Task.sleep(for: .milliseconds(5))
        guard key != "missing" else { throw ActionError("no entry for \(key)") }
        return key.uppercased()
    }
}

/// Awaits the directory for each lookup; publishes how many it resolved.
private final class ResolverStore: Store {
    struct Count: Codable, Sendable, Equatable { var resolved: Int }
    static let name = "resolver"
    static let handlers = Handlers<ResolverStore>()
        .on(lookup) { store, action, _ in
            store.state.append(try await Directory.resolve(action.payload.key))
        }
    var state: [String] = []
    func output() -> Count { Count(resolved: state.count) }
}

/// Waits for the resolver, synchronously, and records the count it read: it must see the awaited handler's result.
private final class TallyStore: Store {
    static let name = "tally"
    static let dependencies = ["resolver"]
    static let handlers = Handlers<TallyStore>()
        .on(lookup) { store, _, context in
            store.state.append(try context.output(of: "resolver", as: ResolverStore.Count.self)?.resolved ?? -1)
        }
        .on(ping) { _, _, context in try context.dispatch(Action(lookup, .init(key: "cascaded"))) }
    var state: [Int] = []
}

@Suite("Async handlers in process")
struct AsyncHandlerTests {
    @Test func theHandlerMapKnowsWhichHandlersAreAsync() {
        #expect(ResolverStore.handlers.isAsync("lookup"))
        #expect(ResolverStore.handlers.hasAsyncHandlers)
        #expect(!TallyStore.handlers.isAsync("lookup") && !TallyStore.handlers.hasAsyncHandlers)
    }

    @Test func dispatchAndWaitAwaitsEachHandlerInDependencyOrder() async throws {
        let hub = Hub()
        try hub.register([TallyStore.self, ResolverStore.self])
        let first = try await hub.dispatchAndWait(Action(lookup, .init(key: "a")))
        #expect(first.outcomes.map(\.store) == ["resolver", "tally"])
        #expect(first.outcomes.allSatisfy { $0.status == .ok })
        try await hub.dispatchAndWait(Action(lookup, .init(key: "b")))
        #expect(hub.store(of: ResolverStore.self)?.state == ["A", "B"])
        #expect(hub.store(of: TallyStore.self)?.state == [1, 2], "the dependent read the awaited handler's output")
    }

    @Test func anAsyncHandlerThatThrowsFailsItsStoreAndSkipsItsDependents() async throws {
        let hub = Hub()
        try hub.register([ResolverStore.self, TallyStore.self])
        let report = try await hub.dispatchAndWait(Action(lookup, .init(key: "missing")))
        #expect(report.outcomes.first { $0.store == "resolver" }?.status == .failed("no entry for missing"))
        #expect(report.outcomes.first { $0.store == "tally" }.map { if case .skipped = $0.status { true } else { false } } == true)
    }

    @Test func aSynchronousDispatchRefusesAnActionAnAsyncHandlerHandlesBeforeRunningAnything() throws {
        let hub = Hub()
        try hub.register([ResolverStore.self, TallyStore.self])
        #expect(throws: StoreError.self) { try hub.dispatch(Action(lookup, .init(key: "a"))) }
        do {
            try hub.dispatch(Action(lookup, .init(key: "a")))
        } catch let error as StoreError {
            #expect(error.code == .asyncHandler && error.message.contains("dispatchAndWait"), "\(error)")
        }
        #expect(hub.store(of: ResolverStore.self)?.state == [] && hub.store(of: TallyStore.self)?.state == [])
        #expect(!hub.isDispatching)
    }

    @Test func aCascadeReachingAnAsyncHandlerInASynchronousDispatchFailsThatStoreLoudly() async throws {
        let hub = Hub()
        try hub.register([ResolverStore.self, TallyStore.self])
        let report = try hub.dispatch(Action(ping))
        let cascade = try #require(report.cascades.first)
        guard case .failed(let message) = cascade.outcomes.first(where: { $0.store == "resolver" })?.status else {
            Issue.record("the resolver was not failed: \(cascade.outcomes)")
            return
        }
        #expect(message.contains("is async"), "\(message)")
        // Awaited, the same cascade runs.
        let awaited = try await hub.dispatchAndWait(Action(ping))
        #expect(awaited.cascades.first?.outcomes.allSatisfy { $0.status == .ok } == true, "\(awaited)")
    }
}
