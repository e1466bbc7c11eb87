/// An action for a ``ReduxStore``. Any type can be one; reducers pick out the kinds they know.
///
/// ```swift
/// enum CounterAction: ReduxAction { case increment, add(Int) }
/// ```
public protocol ReduxAction {
    /// Whether this type is a ``Thunk``, which only the ``Middleware/thunk`` middleware may run. Leave the default.
    /// (A requirement rather than a cast, so that the store can check every action without a runtime conformance
    /// lookup.)
    static var isThunk: Bool { get }
}

extension ReduxAction {
    public static var isThunk: Bool { false }
}

/// Turns the current state and an action into the next state. Return the state unchanged for actions you do not
/// handle; throw to refuse an action, which leaves the state as it was.
public typealias Reducer<State> = (State, any ReduxAction) throws -> State

/// An error raised by a ``ReduxStore`` itself.
public struct ReduxError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of problem occurred. New codes may be added later.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let description: String
        /// A reducer called `dispatch`. Reducers must be pure: dispatch from middleware or a thunk instead.
        public static let dispatchFromReducer = Code(description: "dispatch from reducer")
        /// A ``Thunk`` reached the reducer because the store has no ``Middleware/thunk`` middleware.
        public static let thunkWithoutMiddleware = Code(description: "thunk without middleware")
    }

    /// What kind of problem occurred.
    public let code: Code
    /// What happened and what to do about it.
    public let message: String

    public var description: String { message }

    static let dispatchFromReducer = ReduxError(
        code: .dispatchFromReducer,
        message: "a reducer may not dispatch: reducers must be pure functions of state and action; "
            + "dispatch from a middleware, a thunk or a subscriber instead"
    )

    static let thunkWithoutMiddleware = ReduxError(
        code: .thunkWithoutMiddleware,
        message: "a Thunk reached the reducer: add Middleware.thunk to the store's middleware list"
    )
}
