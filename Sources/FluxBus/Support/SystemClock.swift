/// The shells' clock: the process's monotonic clock as a ``MonotonicTime``. Only shells read it; the engines are
/// handed the time with every input.
enum SystemClock {
    private static let origin = ContinuousClock.now

    static var now: MonotonicTime { MonotonicTime(nanoseconds: (ContinuousClock.now - origin).nanosecondsClamped) }
}
