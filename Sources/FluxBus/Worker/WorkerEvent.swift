import FluxBusProtocol

/// What a ``Worker`` reports as it runs, for tests, tools and logs.
public enum WorkerEvent: Sendable, Hashable {
    /// The coordinator welcomed the worker under an epoch; it is catching up.
    case welcomed(epoch: UInt64, sequence: UInt64)
    /// The worker caught up and told the coordinator it is ready; it now counts in every dispatch.
    case live(sequence: UInt64)
    /// A SNAPSHOT replaced a hosted store's state with its state after `sequence`.
    case snapshotInstalled(store: String, sequence: UInt64)
    /// The worker resumed from its checkpoint: its stores' states after `sequence`.
    case resumed(sequence: UInt64)
    /// A hosted store handled (or skipped) one dispatch.
    case applied(sequence: UInt64, store: String, status: OutcomeStatus)
    /// The coordinator refused an action that one of this worker's handlers dispatched (for example, busy: its queue
    /// was full).
    case cascadeRefused(requestID: String, code: Message.Error.Code, message: String)
    /// The coordinator refused the worker; it stops.
    case rejected(code: Message.Reject.Code, reason: String)
}
