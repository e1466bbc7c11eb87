/// A point in monotonic time, as the engines see it: nanoseconds from an origin the shell chooses.
///
/// The coordinator's and the worker's engines never read a clock. Every input carries the time it happened at, so
/// the shells feed them the process's monotonic clock and the simulator feeds them its own, and a run under a seed
/// replays exactly.
struct MonotonicTime: Comparable, Hashable, Sendable, CustomStringConvertible {
    /// Nanoseconds from the origin.
    var nanoseconds: Int64

    init(nanoseconds: Int64) { self.nanoseconds = nanoseconds }

    static let zero = MonotonicTime(nanoseconds: 0)

    func advanced(by duration: Duration) -> MonotonicTime {
        MonotonicTime(nanoseconds: nanoseconds + duration.nanosecondsClamped)
    }

    static func - (later: MonotonicTime, earlier: MonotonicTime) -> Duration {
        .nanoseconds(later.nanoseconds - earlier.nanoseconds)
    }

    /// Whole microseconds since `earlier`, 0 if it is later. Straight from the nanoseconds: every completion and every
    /// worker's ACK times itself, and going through a `Duration`'s 128-bit arithmetic cost some 190 instructions each.
    func microseconds(since earlier: MonotonicTime) -> UInt64 {
        UInt64(max(0, (nanoseconds - earlier.nanoseconds) / 1_000))
    }

    static func < (lhs: MonotonicTime, rhs: MonotonicTime) -> Bool { lhs.nanoseconds < rhs.nanoseconds }

    var description: String { "\(Double(nanoseconds) / 1e9)s" }
}
