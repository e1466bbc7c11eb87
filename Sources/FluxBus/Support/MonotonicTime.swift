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

    static func < (lhs: MonotonicTime, rhs: MonotonicTime) -> Bool { lhs.nanoseconds < rhs.nanoseconds }

    var description: String { "\(Double(nanoseconds) / 1e9)s" }
}
