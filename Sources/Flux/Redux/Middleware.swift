/// A step between ``ReduxStore/dispatch(_:)-(ReduxAction)`` and the reducer: it may log, transform, delay, swallow or add actions.
///
/// The first middleware in a store's list is the outermost: it sees every action first. `next` passes the action
/// to the following middleware (and finally the reducer); `store.dispatch` starts again from the outermost.
///
/// ```swift
/// let logger = Middleware<AppState> { store, action, next in
///     print("before:", store.getState())
///     try next(action)
///     print("after:", store.getState())
/// }
/// ```
public struct Middleware<State> {
    /// Sends an action down a dispatch chain.
    public typealias Dispatch = (any ReduxAction) throws -> Void

    let body: (MiddlewareAPI<State>, any ReduxAction, Dispatch) throws -> Void

    /// Creates a middleware from a function of the store's API, the action, and the next step.
    public init(_ body: @escaping (_ store: MiddlewareAPI<State>, _ action: any ReduxAction, _ next: Dispatch) throws -> Void) {
        self.body = body
    }

    /// Runs ``Thunk`` actions with the store's `dispatch` and `getState` instead of passing them on.
    public static var thunk: Middleware<State> {
        Middleware { store, action, next in
            if let thunk = action as? Thunk<State> {
                try thunk.body(store.dispatch, store.getState)
            } else {
                try next(action)
            }
        }
    }
}

/// What a middleware can do with its store.
public struct MiddlewareAPI<State> {
    /// Dispatches through the whole chain, from the outermost middleware.
    public let dispatch: Middleware<State>.Dispatch
    /// Reads the current state.
    public let getState: () -> State
}

/// A function dispatched like an action, run by the ``Middleware/thunk`` middleware with `dispatch` and `getState`.
///
/// ```swift
/// store.dispatch(Thunk { dispatch, getState in
///     if getState().count < 10 { try dispatch(CounterAction.increment) }
/// })
/// ```
public struct Thunk<State>: ReduxAction {
    public static var isThunk: Bool { true }

    let body: (_ dispatch: Middleware<State>.Dispatch, _ getState: () -> State) throws -> Void

    /// Creates a thunk.
    public init(_ body: @escaping (_ dispatch: Middleware<State>.Dispatch, _ getState: () -> State) throws -> Void) {
        self.body = body
    }
}

/// A thunk that does asynchronous work, run by ``ReduxStore/dispatch(_:)-(AsyncThunk<State>)``.
///
/// ```swift
/// try await store.dispatch(AsyncThunk { dispatch, getState in
///     let flights = try await api.flights()
///     try dispatch(FlightAction.loaded(flights))
/// })
/// ```
public struct AsyncThunk<State> {
    let body: nonisolated(nonsending) (
        _ dispatch: Middleware<State>.Dispatch, _ getState: () -> State
    ) async throws -> Void

    /// Creates an asynchronous thunk. Its body runs in the caller's isolation domain, where the store lives.
    public init(
        _ body: nonisolated(nonsending) @escaping (
            _ dispatch: Middleware<State>.Dispatch, _ getState: () -> State
        ) async throws -> Void
    ) {
        self.body = body
    }
}
