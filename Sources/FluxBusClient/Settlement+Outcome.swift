import Flux
import FluxBusProtocol

/// The wire's outcome records and ``DependencyExecution``'s settlements say the same four things (an answer's `poisoned` reads as a failure); these convert
/// between them, so that the dependency rule runs on what the coordinator released or the history recorded, and
/// replicas' outcomes merge by one rule (`Settlement.merging`) in the coordinator and in clients' summaries.
extension DependencyExecution.Settlement {
    /// A settlement from a status and its message (ignored for `ok`).
    package init(_ status: OutcomeStatus, message: String) {
        switch status {
        case .ok: self = .ok
        case .failed: self = .failed(message)
        case .skipped: self = .skipped(message)
        case .unknown: self = .lost(message)
        // Never recorded as a decision (a poisoned store's dependents read what was recorded at completion): only an
        // answer says it, and for a summary it is a store that did not apply the action.
        case .poisoned: self = .failed(message)
        }
    }

    /// The status that reports this settlement on the wire.
    package var status: OutcomeStatus {
        switch self {
        case .ok: .ok
        case .failed: .failed
        case .skipped: .skipped
        case .lost: .unknown
        }
    }
}

extension StoreOutput {
    /// How the store ended, as a dependency of the stores waiting for it.
    package var settlement: DependencyExecution.Settlement { .init(status, message: message) }
}

extension StoreResult {
    /// How the store ended, as a dependency of the stores waiting for it.
    package var settlement: DependencyExecution.Settlement { .init(status, message: message) }
}
