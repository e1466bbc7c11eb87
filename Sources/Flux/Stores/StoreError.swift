/// An error from the typed-store machinery (not from a store's own handler).
public struct StoreError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of problem occurred. New codes may be added later.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let description: String
        /// A payload did not decode into the handler's payload type.
        public static let payloadType = Code(description: "payload type")
        /// A store asked for the output of a store it did not declare as a dependency.
        public static let notADependency = Code(description: "not a dependency")
        /// A dependency's output did not decode into the requested type.
        public static let outputType = Code(description: "output type")
        /// Too many actions were dispatched from handlers within one dispatch.
        public static let cascadeLimit = Code(description: "cascade limit")
        /// A state could not be restored from its encoded form.
        public static let stateDecoding = Code(description: "state decoding")
        /// An async handler was reached by a synchronous dispatch (``Hub/dispatch(_:)-(AnyAction)``): dispatch with
        /// ``Hub/dispatchAndWait(_:)-(AnyAction)`` instead.
        public static let asyncHandler = Code(description: "async handler")
    }

    /// What kind of problem occurred.
    public let code: Code
    /// What failed, with what input, and what to do about it.
    public let message: String

    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }

    /// The refusal of an async handler by a synchronous dispatch: one wording for the handler map and the hub.
    static func asyncHandler(store: String, action: String) -> StoreError {
        StoreError(code: .asyncHandler, message: "store `\(store)`'s handler for `\(action)` is async: a synchronous "
            + "dispatch cannot run it; dispatch with `try await hub.dispatchAndWait(action)`")
    }
}
