import Testing

@testable import Flux

/// A store's `output()` may return its output type plainly or as an optional: both are the protocol's requirement,
/// so the signature a user writes cannot compile and silently publish nothing (issue: `-> Summary` used to lose to
/// the default `NoOutput`, and the dependent read nil).
@Suite struct OutputSignatureTests {
    struct Summary: Codable, Sendable, Equatable {
        var count: Int
    }

    static let add = ActionType<Int>("totals.add")

    final class PlainTotals: Store {
        static let name = "totals"
        static let handlers = Handlers<PlainTotals>().on(add) { store, action, _ in store.state += action.payload }
        var state = 0
        init() {}
        func output() -> Summary { Summary(count: state) }
    }

    final class OptionalTotals: Store {
        static let name = "totals"
        static let handlers = Handlers<OptionalTotals>().on(add) { store, action, _ in store.state += action.payload }
        var state = 0
        init() {}
        /// Publishes only once the count is positive.
        func output() -> Summary? { state > 0 ? Summary(count: state) : nil }
    }

    /// Records what it read of the totals' output in each dispatch.
    final class Reader: Store {
        static let name = "reader"
        static let dependencies = ["totals"]
        static let handlers = Handlers<Reader>().on(add) { store, _, context in
            store.state.append(try context.output(of: "totals", as: Summary.self)?.count ?? -1)
        }
        var state: [Int] = []
        init() {}
    }

    @Test func aPlainOutputTypeIsPublished() throws {
        #expect(PlainTotals.Output.self == Summary.self)
        let hub = Hub()
        try hub.register([PlainTotals.self, Reader.self])
        try hub.dispatch(Action(Self.add, 2))
        try hub.dispatch(Action(Self.add, 3))
        #expect(hub.store(of: Reader.self)?.state == [2, 5])
        #expect(try AnyStore(PlainTotals()).encodedOutput() == Array(#"{"count":0}"#.utf8))
    }

    @Test func anOptionalOutputPublishesNothingWhenNil() throws {
        let hub = Hub()
        try hub.register([OptionalTotals.self, Reader.self])
        try hub.dispatch(Action(Self.add, 0))
        try hub.dispatch(Action(Self.add, 4))
        #expect(hub.store(of: Reader.self)?.state == [-1, 4])
        #expect(try AnyStore(OptionalTotals()).encodedOutput() == nil)
    }

    @Test func aStoreWithoutAnOutputPublishesNothing() throws {
        #expect(try AnyStore(Reader()).encodedOutput() == nil)
        #expect(Reader.Output.self == NoOutput.self)
    }
}
