/// A Redux store: immutable state replaced by a reducer, subscribers told of each change with the old and new
/// state, and middleware around the reducer.
///
/// Rules:
/// - A reducer that dispatches gets ``ReduxError`` (`dispatchFromReducer`); a reducer that throws leaves the state
///   as it was and the store fully usable.
/// - For `Equatable` state, a reduction that yields an equal state notifies nobody, unless `skipRepeats` is off.
/// - A subscriber may dispatch. Its action is queued and reduced once every subscriber has heard of the current
///   change, so each subscriber sees an unbroken chain of (old, new) pairs. Errors from queued actions are
///   rethrown, the first one, from the `dispatch` call that started the round, after every queued action ran.
///
/// Like the ``Dispatcher``, a store belongs to one isolation domain.
///
/// ```swift
/// let store = ReduxStore(state: 0, reducer: { count, action in
///     (action as? CounterAction) == .increment ? count + 1 : count
/// }, middleware: [.thunk])
/// let subscription = store.subscribe { old, new in print(old, "->", new) }
/// try store.dispatch(CounterAction.increment)    // prints 0 -> 1
/// ```
public final class ReduxStore<State> {
    // Exclusivity: these are read and written on every dispatch. No access outlives a statement (the reducer's
    // result is stored after it returns; subscribers get the states as arguments), and the store is confined to
    // one isolation domain, so Swift's dynamic checks are turned off for them.

    /// The current state.
    @exclusivity(unchecked) public private(set) var state: State

    private let reducer: Reducer<State>
    private let isRepeat: ((State, State) -> Bool)?
    @exclusivity(unchecked) private var chain: Middleware<State>.Dispatch = { _ in }
    /// Shared with the subscriptions, so that they can end without a weak reference to the store: a weak
    /// reference would give the store a side table and send every retain and release down the slow path.
    private let subscribers = SubscriberList<State>()
    @exclusivity(unchecked) private var isReducing = false
    @exclusivity(unchecked) private var isNotifying = false
    @exclusivity(unchecked) private var deferredActions: [any ReduxAction] = []

    /// Creates a store.
    /// - Parameters:
    ///   - state: the initial state.
    ///   - reducer: computes each next state.
    ///   - middleware: steps around the reducer; the first is the outermost.
    ///   - skipRepeats: when the state is `Equatable`, subscribers are not told of a reduction that leaves it
    ///     equal; set to false to notify after every reduction. Non-`Equatable` state always notifies.
    public init(
        state: State,
        reducer: @escaping Reducer<State>,
        middleware: [Middleware<State>] = [],
        skipRepeats: Bool = true
    ) {
        self.state = state
        self.reducer = reducer
        self.isRepeat = skipRepeats ? Self.equality() : nil
        buildChain(middleware)
    }

    /// `==` for `State`, when it is `Equatable`.
    private static func equality() -> ((State, State) -> Bool)? {
        guard let equatable = State.self as? any Equatable.Type else { return nil }
        func compare<E: Equatable>(_: E.Type) -> (State, State) -> Bool {
            // State is E here (checked above), so reinterpreting the values is exact and costs nothing.
            { lhs, rhs in
                withUnsafePointer(to: lhs) { left in
                    withUnsafePointer(to: rhs) { right in
                        left.withMemoryRebound(to: E.self, capacity: 1) { l in
                            right.withMemoryRebound(to: E.self, capacity: 1) { r in l.pointee == r.pointee }
                        }
                    }
                }
            }
        }
        return compare(equatable)
    }

    /// Dispatches an action through the middleware to the reducer.
    /// - Throws: ``ReduxError`` when called from a reducer, or whatever a middleware or the reducer threw.
    public func dispatch(_ action: any ReduxAction) throws {
        guard !isReducing else { throw ReduxError.dispatchFromReducer }
        if isNotifying {
            deferredActions.append(action)
            return
        }
        try chain(action)
    }

    /// Runs an asynchronous thunk in the caller's isolation domain, giving it `dispatch` and `getState`.
    /// - Throws: whatever the thunk throws.
    public nonisolated(nonsending) func dispatch(_ thunk: AsyncThunk<State>) async throws {
        try await thunk.body({ [unowned self] in try self.dispatch($0) }, { [unowned self] in self.state })
    }

    /// Calls `handler` with the old and new state after every change.
    /// - Returns: the subscription; the handler is called until it is cancelled or deallocated.
    public func subscribe(_ handler: @escaping (_ old: State, _ new: State) -> Void) -> Subscription {
        let subscriber = SubscriberList<State>.Subscriber(handler: handler)
        let list = subscribers
        list.active.append(subscriber)
        return Subscription {
            subscriber.isActive = false
            list.active.removeAll { $0 === subscriber }
        }
    }

    /// The number of active subscriptions.
    public var subscriberCount: Int { subscribers.active.count }

    private func buildChain(_ middleware: [Middleware<State>]) {
        let api = MiddlewareAPI<State>(
            dispatch: { [unowned self] in try self.dispatch($0) },
            getState: { [unowned self] in self.state }
        )
        var next: Middleware<State>.Dispatch = { [unowned self] in try self.reduce($0) }
        for step in middleware.reversed() {
            let following = next
            next = { action in try step.body(api, action, following) }
        }
        chain = next
    }

    private func reduce(_ action: any ReduxAction) throws {
        guard !type(of: action).isThunk else { throw ReduxError.thunkWithoutMiddleware }
        let old = state
        isReducing = true
        defer { isReducing = false }
        let new = try reducer(old, action)
        isReducing = false
        state = new
        if let isRepeat, isRepeat(old, new) { return }
        try notify(old, new)
    }

    private func notify(_ old: State, _ new: State) throws {
        isNotifying = true
        for subscriber in subscribers.active where subscriber.isActive {
            subscriber.handler(old, new)
        }
        isNotifying = false
        var firstError: (any Error)?
        while !deferredActions.isEmpty {
            do { try chain(deferredActions.removeFirst()) } catch { firstError = firstError ?? error }
        }
        if let firstError { throw firstError }
    }
}

/// A store's subscribers, in subscription order. A subscriber cancelled during a notification is marked inactive
/// at once, so the notification in progress skips it.
final class SubscriberList<State> {
    final class Subscriber {
        let handler: (State, State) -> Void
        var isActive = true
        init(handler: @escaping (State, State) -> Void) { self.handler = handler }
    }

    var active: [Subscriber] = []
}
