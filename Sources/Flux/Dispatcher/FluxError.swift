/// The invariants of Facebook's Flux `Dispatcher`, one case each, with Flux's own text.
///
/// This is the project's one deliberate error enum: the cases mirror Flux's invariants, which are fixed.
public enum FluxError: Error, Equatable, Sendable, CustomStringConvertible {
    /// `dispatch(_:)` was called while a dispatch was running.
    case dispatchInProgress
    /// `waitFor(_:)` was called outside a dispatch.
    case notDispatching
    /// `waitFor(_:)` named a callback that is still running: it waits, directly or not, for itself.
    case circularDependency(DispatchToken)
    /// `waitFor(_:)` or `unregister(_:)` named a token that maps to no registered callback.
    case unknownToken(DispatchToken)

    public var description: String {
        switch self {
        case .dispatchInProgress:
            "Cannot dispatch in the middle of a dispatch."
        case .notDispatching:
            "Must be invoked while dispatching."
        case .circularDependency(let token):
            "Circular dependency detected while waiting for `\(token)`."
        case .unknownToken(let token):
            "`\(token)` does not map to a registered callback."
        }
    }
}
