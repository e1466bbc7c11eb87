import Synchronization

/// A timer scheduled on an ``IOLoop`` with ``IOLoopScope/schedule(after:_:)`` or
/// ``IOLoopScope/schedule(every:_:)``.
///
/// Cancel it from any thread: the loop drops it before it would next fire. Cancelling does not wake the loop.
public final class IOLoopTimer: Sendable {
    private let cancelled = Atomic<Bool>(false)

    init() {}

    /// Stops the timer; its body will not run again. Calling it more than once is harmless.
    public func cancel() {
        cancelled.store(true, ordering: .releasing)
    }

    /// Whether ``cancel()`` was called.
    public var isCancelled: Bool { cancelled.load(ordering: .acquiring) }
}
