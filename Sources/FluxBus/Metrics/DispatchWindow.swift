import FluxBusProtocol

/// The coordinator's recent throughput and latency, for STATUS's ``DispatchFigures``: totals, the latencies of the
/// latest 1,024 completed actions, and a count taken about once a second over the last ten seconds for the rates.
///
/// The shell records into it on every completion, so it keeps fixed-size buffers: a completion writes one slot and
/// allocates nothing. The percentiles are worked out only when a STATUS asks.
struct DispatchWindow {
    private(set) var dispatchesTotal: UInt64 = 0
    private(set) var actionsTotal: UInt64 = 0
    private var latencies: [UInt64]
    private var nextLatency = 0
    private var latencyCount = 0
    /// (when, dispatches, actions), oldest first once full.
    private var counts: [(at: MonotonicTime, dispatches: UInt64, actions: UInt64)]
    private var nextCount = 0

    static let latencyCapacity = 1024
    /// Counts kept for the rates: one a second gives a ten-second window.
    static let countCapacity = 11

    init(now: MonotonicTime) {
        latencies = Array(repeating: 0, count: Self.latencyCapacity)
        counts = [(now, 0, 0)]
        counts.reserveCapacity(Self.countCapacity)
    }

    /// One action completed after `micros` from its publication.
    mutating func actionCompleted(micros: UInt64) {
        actionsTotal &+= 1
        latencies[nextLatency] = micros
        nextLatency = (nextLatency + 1) % Self.latencyCapacity
        latencyCount = min(latencyCount + 1, Self.latencyCapacity)
    }

    /// One request answered.
    mutating func dispatchAnswered() { dispatchesTotal &+= 1 }

    /// Takes a count for the rates when the newest is a second old or more.
    mutating func tick(at now: MonotonicTime) {
        let newest = counts[(nextCount + counts.count - 1) % counts.count]
        guard now - newest.at >= .milliseconds(900) else { return }
        let entry = (now, dispatchesTotal, actionsTotal)
        if counts.count < Self.countCapacity {
            counts.append(entry)
        } else {
            counts[nextCount] = entry
            nextCount = (nextCount + 1) % Self.countCapacity
        }
    }

    /// The figures at `now`: rates since the oldest count kept, percentiles over the latencies kept.
    func figures(at now: MonotonicTime) -> DispatchFigures {
        let oldest = counts.count < Self.countCapacity ? counts[0] : counts[nextCount]
        let elapsedMicros = now.microseconds(since: oldest.at)
        func rate(_ delta: UInt64) -> UInt64 {
            elapsedMicros == 0 ? 0 : UInt64((Double(delta) * 1e9 / Double(elapsedMicros)).rounded())
        }
        let sorted = latencies[..<latencyCount].sorted()
        func percentile(_ p: Double) -> UInt64 {
            sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)]
        }
        return DispatchFigures(
            dispatchesTotal: dispatchesTotal, actionsTotal: actionsTotal,
            dispatchRateMilli: rate(dispatchesTotal - oldest.dispatches), actionRateMilli: rate(actionsTotal - oldest.actions),
            latencySamples: UInt32(latencyCount), latencyP50Micros: percentile(0.5), latencyP90Micros: percentile(0.9),
            latencyP99Micros: percentile(0.99), latencyMaxMicros: sorted.last ?? 0)
    }
}
