#if canImport(Glibc)
import Glibc
#endif

/// The shells' clock: the process's monotonic clock as a ``MonotonicTime``. Only shells read it; the engines are
/// handed the time with every input.
enum SystemClock {
    private static let origin = reading()

    static var now: MonotonicTime { MonotonicTime(nanoseconds: reading() &- origin) }

    /// The clock `ContinuousClock` reads, in nanoseconds. On Linux it is read directly: an instant's difference as a
    /// `Duration`, then its nanoseconds, cost some 350 instructions of 128-bit arithmetic, and the shells read the
    /// clock for every message (issue 17).
    private static func reading() -> Int64 {
        #if os(Linux)
        var time = timespec()
        clock_gettime(CLOCK_BOOTTIME, &time)
        return Int64(time.tv_sec) &* 1_000_000_000 &+ Int64(time.tv_nsec)
        #else
        return (ContinuousClock.now - epoch).nanosecondsClamped
        #endif
    }

    #if !os(Linux)
    private static let epoch = ContinuousClock.now
    #endif
}
