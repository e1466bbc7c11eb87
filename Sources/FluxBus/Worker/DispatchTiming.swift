import FluxBusProtocol

/// What a worker measures of a traced dispatch (one whose ACTION carries a `traceparent`), on its own clock and
/// relative to its own receipt of the ACTION: no other process ever subtracts its times from these. The engine keeps
/// one only for a traced dispatch, so an untraced one reads no clock and allocates nothing for it.
struct DispatchTiming {
    /// When the ACTION arrived: the origin of every figure.
    let receivedAt: MonotonicTime
    /// Stores measured since the last ACK, which the next ACK carries.
    private var unsent: [StoreTiming] = []

    init(receivedAt: MonotonicTime) { self.receivedAt = receivedAt }

    /// Records one store's run: `ready` is the time of the input (the ACTION or a RELEASE) that let it run.
    mutating func ran(_ store: String, ready: MonotonicTime, started: MonotonicTime, finished: MonotonicTime) {
        unsent.append(StoreTiming(
            store: store, readyMicros: micros(ready), startedMicros: micros(started), finishedMicros: micros(finished),
            sentMicros: 0))
    }

    /// The timings for an ACK leaving at `sent`.
    mutating func takeUnsent(sentAt sent: MonotonicTime) -> [StoreTiming] {
        defer { unsent.removeAll() }
        return unsent.map {
            var timing = $0
            timing.sentMicros = micros(sent)
            return timing
        }
    }

    private func micros(_ time: MonotonicTime) -> UInt64 { time.microseconds(since: receivedAt) }
}
