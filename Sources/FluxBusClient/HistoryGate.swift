import Synchronization

/// One history request at a time on a client. REPLAY carries no request id, so a second FETCH outstanding on the same
/// connection could not be told from the first: watchers and `tail`s sharing a client take turns instead of one of
/// them failing.
final class HistoryGate: Sendable {
    private struct State {
        var busy = false
        var nextTicket: UInt64 = 0
        var waiting: [(ticket: UInt64, continuation: CheckedContinuation<Void, any Error>)] = []
        /// Tickets cancelled before their continuation was queued.
        var cancelled: Set<UInt64> = []
    }

    private let state = Mutex(State())

    /// Runs `body` once no other history request of this client is outstanding.
    /// - Throws: `CancellationError` when the task is cancelled while it waits its turn; whatever `body` throws.
    func withTurn<T>(_ body: () async throws -> T) async throws -> T {
        try await acquire()
        defer { release() }
        return try await body()
    }

    private func acquire() async throws {
        let ticket: UInt64? = state.withLock { state in
            if !state.busy {
                state.busy = true
                return nil
            }
            state.nextTicket += 1
            return state.nextTicket
        }
        guard let ticket else { return }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                // Decided under the lock that queues it: a release in between would otherwise hand the turn to nobody.
                let now: Result<Void, any Error>? = state.withLock { state in
                    if state.cancelled.remove(ticket) != nil { return .failure(CancellationError()) }
                    if !state.busy {
                        state.busy = true
                        return .success(())
                    }
                    state.waiting.append((ticket, continuation))
                    return nil
                }
                if let now { continuation.resume(with: now) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Void, any Error>? in
                guard let index = state.waiting.firstIndex(where: { $0.ticket == ticket }) else {
                    state.cancelled.insert(ticket)
                    return nil
                }
                return state.waiting.remove(at: index).continuation
            }
            waiter?.resume(throwing: CancellationError())
        }
    }

    private func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            guard !state.waiting.isEmpty else {
                state.busy = false
                return nil
            }
            // The turn passes straight to the next in line: `busy` stays set.
            return state.waiting.removeFirst().continuation
        }
        next?.resume()
    }
}
