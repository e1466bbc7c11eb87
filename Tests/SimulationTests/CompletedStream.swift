import FluxBusProtocol

/// What a reader of the stream (`fluxbus tail`) relies on: each coordinator publishes the COMPLETEDs of its epoch in
/// order, each once, and none is kept back for good, though the coordinator holds one for the next publication
/// (``CoordinatorConfiguration/completedWindow``).
struct CompletedStream {
    /// Per epoch, the last COMPLETED published.
    private var last: [UInt64: UInt64] = [:]
    /// Per epoch, the last sequence completed before it began (recovered from the log): it publishes none of those.
    private var startedAfter: [UInt64: UInt64] = [:]

    mutating func started(epoch: UInt64, lastCompleted: UInt64) { startedAfter[epoch] = lastCompleted }

    /// The violation a published COMPLETED shows, if any.
    mutating func published(_ completed: Message.Completed) -> String? {
        defer { last[completed.epoch] = completed.sequence }
        if let previous = last[completed.epoch], completed.sequence <= previous {
            return "the stream's COMPLETEDs go back: #\(completed.sequence) after #\(previous) in epoch \(completed.epoch)"
        }
        return nil
    }

    /// The violation, if any, once the bus is quiet: a dispatch the coordinator of `epoch` completed, through
    /// `lastCompleted`, whose COMPLETED it never published.
    func unpublished(epoch: UInt64, lastCompleted: UInt64) -> String? {
        guard lastCompleted > startedAfter[epoch, default: 0], last[epoch, default: 0] < lastCompleted else { return nil }
        return "the coordinator completed #\(lastCompleted) in epoch \(epoch) and never published its COMPLETED (the "
            + "stream's last is #\(last[epoch].map(String.init) ?? "none"))"
    }
}
