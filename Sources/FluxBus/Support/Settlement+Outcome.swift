public import Flux
public import FluxBusProtocol

extension DependencyExecution.Settlement {
    /// An outcome on the wire as the dependency-order executor sees it.
    public init(_ status: OutcomeStatus, message: String) {
        switch status {
        case .ok: self = .ok
        case .failed: self = .failed(message)
        case .skipped: self = .skipped(message)
        case .lost: self = .lost(message)
        }
    }

    /// The wire's outcome status for this settlement.
    public var status: OutcomeStatus {
        switch self {
        case .ok: .ok
        case .failed: .failed
        case .skipped: .skipped
        case .lost: .lost
        }
    }
}
