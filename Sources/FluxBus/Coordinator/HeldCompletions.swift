import FluxBusProtocol

/// COMPLETEDs waiting, for at most ``CoordinatorConfiguration/completedWindow``, for the next publication to travel
/// with.
///
/// Under a lock-step client, a dispatch's COMPLETED would go out alone right after the ACK that completed it, and
/// every worker would wake for it a second time per dispatch, only to note a sequence it already applied. Held
/// until the next ACTION, it goes in the same BUNDLE, ahead of it: each worker wakes once per dispatch, and the stream
/// keeps its order. When nothing follows within the window, the COMPLETEDs go out alone when it ends.
///
/// They are joined into runs (COMPLETIONS) as they are held, within the outbox's limits, as the outbox would join
/// them: a batch's thousand COMPLETEDs then reach it as one message per run. Handed over one by one, each cost the
/// copy out of this list and the outbox's own look at it, some 1,000 instructions.
struct HeldCompletions {
    private var joiner = MessageRuns.Joiner(maxItems: Outbox<Int>.bundleCount, maxBytes: Outbox<Int>.bundleBytes)
    /// When the oldest held COMPLETED's window ends; nil when none is held.
    private(set) var until: MonotonicTime?

    var isEmpty: Bool { until == nil }

    /// Holds `completed`; the window counts from the first one held.
    mutating func hold(_ completed: consuming Message, at now: MonotonicTime, window: Duration) {
        if until == nil { until = now.advanced(by: window) }
        joiner.add(completed)
    }

    /// Everything held, in order, alike COMPLETEDs of consecutive sequences as runs; nothing held afterwards.
    mutating func take() -> [Message] {
        until = nil
        return joiner.take()
    }
}
