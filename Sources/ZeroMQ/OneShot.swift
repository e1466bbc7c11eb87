import Synchronization

/// A result delivered once, from any thread, to one awaiting task; the bridge between the loop thread and async
/// callers of ``IOLoop/run(_:)`` and ``IOLoop/shutdown()``.
///
/// Cancelling the waiting task resumes it with `CancellationError`, unless the work was already ``claim()``ed:
/// work that has started runs to the end and delivers its own result.
package final class OneShot<Value: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Value, any Error>?
        var outcome: Result<Value, any Error>?
        var claimed = false
    }

    private let state = Mutex(State())

    package init() {}

    /// Waits for ``finish(_:)``, or for the task's cancellation.
    package func value() async throws -> Value {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let outcome = state.withLock { state in
                    if state.outcome == nil { state.continuation = continuation }
                    return state.outcome
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            deliver(.failure(CancellationError()), unlessClaimed: true)
        }
    }

    /// Marks the work as started; `false` if the waiter has already gone (cancelled), so the work must be skipped.
    package func claim() -> Bool {
        state.withLock { state in
            guard state.outcome == nil else { return false }
            state.claimed = true
            return true
        }
    }

    /// Delivers the result; only the first delivery counts.
    package func finish(_ outcome: Result<Value, any Error>) {
        deliver(outcome, unlessClaimed: false)
    }

    private func deliver(_ outcome: Result<Value, any Error>, unlessClaimed: Bool) {
        let continuation = state.withLock { state -> CheckedContinuation<Value, any Error>? in
            guard state.outcome == nil, !(unlessClaimed && state.claimed) else { return nil }
            state.outcome = outcome
            defer { state.continuation = nil }
            return state.continuation
        }
        continuation?.resume(with: outcome)
    }
}
