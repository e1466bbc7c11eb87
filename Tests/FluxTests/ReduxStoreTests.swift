import Testing

@testable import Flux

private enum CounterAction: ReduxAction, Equatable {
    case increment
    case add(Int)
    case refuse
    case noop
}

private struct Refused: Error, Equatable {}

private func counterReducer(_ count: Int, _ action: any ReduxAction) throws -> Int {
    switch action as? CounterAction {
    case .increment: count + 1
    case .add(let amount): count + amount
    case .refuse: throw Refused()
    case .noop, nil: count
    }
}

@Suite("Redux store")
struct ReduxStoreTests {
    @Test func theReducerMakesEachNextStateAndSubscribersGetOldAndNew() throws {
        let store = ReduxStore(state: 0, reducer: counterReducer)
        var changes: [[Int]] = []
        let subscription = store.subscribe { old, new in changes.append([old, new]) }
        try store.dispatch(CounterAction.increment)
        try store.dispatch(CounterAction.add(5))
        #expect(store.state == 6)
        #expect(changes == [[0, 1], [1, 6]])
        _ = subscription
    }

    @Test func aSubscriptionEndsWhenCancelledOrDeallocated() throws {
        let store = ReduxStore(state: 0, reducer: counterReducer)
        var kept = 0
        var cancelled = 0
        var dropped = 0
        let keep = store.subscribe { _, _ in kept += 1 }
        let cancel = store.subscribe { _, _ in cancelled += 1 }
        var drop: Subscription? = store.subscribe { _, _ in dropped += 1 }
        try store.dispatch(CounterAction.increment)
        cancel.cancel()
        cancel.cancel()
        drop = nil
        try store.dispatch(CounterAction.increment)
        #expect(kept == 2)
        #expect(cancelled == 1)
        #expect(dropped == 1)
        #expect(cancel.isCancelled)
        #expect(store.subscriberCount == 1)
        _ = (keep, drop)
    }

    @Test func middlewareRunsFirstOutermostAndItsDispatchReentersTheWholeChain() throws {
        var trace: [String] = []
        func tracer(_ name: String) -> Middleware<Int> {
            Middleware { _, action, next in
                trace.append("\(name) in \(action)")
                try next(action)
                trace.append("\(name) out")
            }
        }
        // Turns `add(n)` into n increments, each dispatched from the top of the chain.
        let expand = Middleware<Int> { store, action, next in
            if case .add(let amount) = action as? CounterAction {
                for _ in 0..<amount { try store.dispatch(CounterAction.increment) }
            } else {
                try next(action)
            }
        }
        let store = ReduxStore(state: 0, reducer: counterReducer, middleware: [tracer("outer"), expand, tracer("inner")])
        try store.dispatch(CounterAction.add(2))
        #expect(store.state == 2)
        #expect(trace == [
            "outer in add(2)",
            "outer in increment", "inner in increment", "inner out", "outer out",
            "outer in increment", "inner in increment", "inner out", "outer out",
            "outer out",
        ])
    }

    @Test func aMiddlewareMaySwallowAnAction() throws {
        let filter = Middleware<Int> { _, action, next in
            if (action as? CounterAction) != .increment { try next(action) }
        }
        let store = ReduxStore(state: 0, reducer: counterReducer, middleware: [filter])
        try store.dispatch(CounterAction.increment)
        try store.dispatch(CounterAction.add(3))
        #expect(store.state == 3)
    }

    @Test func thunksGetDispatchAndGetState() throws {
        let store = ReduxStore(state: 0, reducer: counterReducer, middleware: [.thunk])
        try store.dispatch(Thunk<Int> { dispatch, getState in
            while getState() < 5 { try dispatch(CounterAction.increment) }
        })
        #expect(store.state == 5)
    }

    @Test func aThunkWithoutTheMiddlewareIsAClearError() {
        let store = ReduxStore(state: 0, reducer: counterReducer)
        let error = #expect(throws: ReduxError.self) { try store.dispatch(Thunk<Int> { _, _ in }) }
        #expect(error?.code == .thunkWithoutMiddleware)
        #expect(error?.description.contains("add Middleware.thunk") == true)
    }

    @Test func asyncThunksAwaitAndDispatch() async throws {
        let store = ReduxStore(state: 0, reducer: counterReducer, middleware: [.thunk])
        try await store.dispatch(AsyncThunk<Int> { dispatch, getState in
            try dispatch(CounterAction.increment)
            try await Task.sleep(for: .milliseconds(1))
            try dispatch(CounterAction.add(getState() * 10))
        })
        #expect(store.state == 11)
    }

    @MainActor @Test func asyncThunksRunOnTheCallersActor() async throws {
        let store = ReduxStore(state: 0, reducer: counterReducer)
        try await store.dispatch(AsyncThunk<Int> { dispatch, _ in
            MainActor.assertIsolated()
            try await Task.sleep(for: .milliseconds(1))
            try dispatch(CounterAction.increment)
        })
        #expect(store.state == 1)
    }

    @Test func aReducerThatDispatchesGetsAClearError() throws {
        var store: ReduxStore<Int>!
        var caught: ReduxError?
        store = ReduxStore(state: 0, reducer: { count, action in
            do { try store.dispatch(CounterAction.noop) } catch let error as ReduxError { caught = error }
            return try counterReducer(count, action)
        })
        try store.dispatch(CounterAction.increment)
        #expect(caught?.code == .dispatchFromReducer)
        #expect(store.state == 1)
    }

    @Test func aReducerThatThrowsLeavesTheStoreUsable() throws {
        let store = ReduxStore(state: 0, reducer: counterReducer)
        var changes = 0
        let subscription = store.subscribe { _, _ in changes += 1 }
        try store.dispatch(CounterAction.increment)
        #expect(throws: Refused()) { try store.dispatch(CounterAction.refuse) }
        #expect(store.state == 1)
        try store.dispatch(CounterAction.increment)
        #expect(store.state == 2)
        #expect(changes == 2)
        _ = subscription
    }

    @Test func repeatedEquatableStatesAreSkippedUnlessTurnedOff() throws {
        let skipping = ReduxStore(state: 0, reducer: counterReducer)
        let notSkipping = ReduxStore(state: 0, reducer: counterReducer, skipRepeats: false)
        var skippingCalls = 0
        var notSkippingCalls = 0
        let first = skipping.subscribe { _, _ in skippingCalls += 1 }
        let second = notSkipping.subscribe { _, _ in notSkippingCalls += 1 }
        for store in [skipping, notSkipping] {
            try store.dispatch(CounterAction.noop)
            try store.dispatch(CounterAction.increment)
            try store.dispatch(CounterAction.noop)
        }
        #expect(skippingCalls == 1)
        #expect(notSkippingCalls == 3)
        _ = (first, second)
    }

    @Test func nonEquatableStateNotifiesOnEveryReduction() throws {
        struct Box { var value: Int }
        let store = ReduxStore(state: Box(value: 0), reducer: { box, _ in box })
        var calls = 0
        let subscription = store.subscribe { _, _ in calls += 1 }
        try store.dispatch(CounterAction.noop)
        #expect(calls == 1)
        _ = subscription
    }

    /// Defined behaviour: a subscriber's dispatch is queued until every subscriber heard of the current change.
    @Test func aSubscribersDispatchRunsAfterEverySubscriberSawTheChange() throws {
        let store = ReduxStore(state: 0, reducer: counterReducer)
        var seenByFirst: [[Int]] = []
        var seenBySecond: [[Int]] = []
        let first = store.subscribe { [store] old, new in
            seenByFirst.append([old, new])
            if new == 1 { try? store.dispatch(CounterAction.add(10)) }
        }
        let second = store.subscribe { old, new in seenBySecond.append([old, new]) }
        try store.dispatch(CounterAction.increment)
        #expect(store.state == 11)
        #expect(seenByFirst == [[0, 1], [1, 11]])
        #expect(seenBySecond == [[0, 1], [1, 11]])
        _ = (first, second)
    }

    @Test func anErrorFromAQueuedActionReachesTheOuterDispatchAfterTheQueueDrained() throws {
        let store = ReduxStore(state: 0, reducer: counterReducer)
        let subscription = store.subscribe { [store] _, new in
            if new == 1 {
                try? store.dispatch(CounterAction.refuse)
                try? store.dispatch(CounterAction.add(5))
            }
        }
        #expect(throws: Refused()) { try store.dispatch(CounterAction.increment) }
        #expect(store.state == 6)
        _ = subscription
    }
}
