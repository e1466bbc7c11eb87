import Dispatch
import Synchronization

/// A one-way "it has finished" signal that threads can block on and tasks can await; used for the end of an
/// ``IOLoop``'s thread and of a ``ZMQContext``'s termination.
final class Completion: Sendable {
    private struct State {
        var isComplete = false
        var waiters: [OneShot<Void>] = []
    }

    private let state = Mutex(State())
    /// Entered once at creation and left by ``complete()``, so that `wait()` blocks until then.
    private let group = DispatchGroup()

    init() {
        group.enter()
    }

    var isComplete: Bool { state.withLock { $0.isComplete } }

    /// Signals completion to every waiter, present and future. Only the first call counts.
    func complete() {
        let waiters = state.withLock { state -> [OneShot<Void>]? in
            guard !state.isComplete else { return nil }
            state.isComplete = true
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        guard let waiters else { return }
        for waiter in waiters { waiter.finish(.success(())) }
        group.leave()
    }

    /// Blocks the calling thread until ``complete()``. Never call it on the cooperative pool.
    func waitBlocking() {
        group.wait()
    }

    /// Suspends until ``complete()``, or until the task is cancelled.
    func wait() async {
        let waiter = OneShot<Void>()
        let done = state.withLock { state in
            if !state.isComplete { state.waiters.append(waiter) }
            return state.isComplete
        }
        if !done { try? await waiter.value() }
    }
}
