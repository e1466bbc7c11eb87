import Dispatch
import Foundation
import FluxBusProtocol
import Logging
import Synchronization
import ZeroMQ

/// Keeps a worker heard, and stoppable, while its I/O thread is busy inside the engine: a slow handler, a long batch.
///
/// The engine and the stores' handlers run on the worker's one I/O thread, which also sends the heartbeats and
/// serves the graceful stop. So the shell marks every `engine.handle` with ``enter(at:standing:ticking:)`` and
/// ``leave()``, and a thread of the guard's own wakes a few times per heartbeat interval to look:
///
/// - **Heartbeats.** When the I/O thread is inside the engine and has not ticked for one and a half intervals, the
///   guard sends a HEARTBEAT for it, with the epoch and applied sequence of the last ``enter(at:standing:ticking:)``.
///   Never while joining: a worker heartbeats only once welcomed. The coordinator judges the dispatch by its ACK
///   deadline, not by these.
/// - **Stopping.** Once told of a graceful stop (``stopAsked(at:)``), if the I/O thread is still inside the engine
///   after ``grace``, the guard says GOODBYE itself and abandons the shell: when the engine returns, the I/O thread
///   carries out none of its effects (no ACK, no checkpoint) and ends its loop. `onAbandon` then lets the worker's
///   `run()` return without waiting for that thread.
///
/// Borrowing the DEALER: ZeroMQ lets a socket move between threads across a full memory barrier. The guard touches
/// the DEALER only while it holds `state`'s lock and `state` says the I/O thread is inside the engine, where it
/// touches no socket; the I/O thread takes the same lock in ``leave()`` before it touches the DEALER again, so it
/// waits for a send in progress. The only cost on the hot path is that lock, twice per engine input.
final class LivenessGuard: @unchecked Sendable {
    // @unchecked Sendable is sound: `dealer` (the one non-Sendable member) is used only inside `state.withLock` while
    // `busySince` is set, that is, while the I/O thread that owns the socket is inside the engine and away from every
    // socket; the lock orders those uses against the I/O thread's (see the type's comment). Everything else is
    // immutable, Sendable, or in `state`.

    /// What the guard says for the worker: as of the engine's latest input.
    struct Standing {
        var epoch: UInt64
        var applied: UInt64
        /// Welcomed (catching up or live): heartbeats are due. Not while joining or stopped.
        var mayHeartbeat: Bool
        var heartbeat: Duration
    }

    /// What ``leave()`` tells the I/O thread.
    enum Verdict {
        /// Carry on.
        case carryOn
        /// A graceful stop was asked for: stop draining, so the loop runs the stop.
        case stopAsked
        /// The guard gave up on this thread: perform nothing more, and end the loop.
        case abandoned
    }

    private struct State {
        var busySince: MonotonicTime?
        var standing: Standing
        /// When the I/O thread last ticked (its own heartbeat), or the guard last beat for it.
        var lastBeat: MonotonicTime
        var stopAskedAt: MonotonicTime?
        var abandoned = false
        var ended = false
        /// Whether the guard already logged the busy stretch under way.
        var reported = false
    }

    /// How long a graceful stop waits for the engine to return before the guard says GOODBYE for it.
    let grace: Duration
    private let state: Mutex<State>
    private let wake = DispatchSemaphore(value: 0)
    private let dealer: ZMQSocket
    private let codec = Codec()
    private let logger: Logger
    private let onAbandon: @Sendable () -> Void

    /// Starts the guard's thread. Create it on the I/O thread that owns `dealer`.
    init(
        dealer: ZMQSocket, standing: Standing, grace: Duration, logger: Logger, now: MonotonicTime,
        onAbandon: @escaping @Sendable () -> Void
    ) {
        self.dealer = dealer
        self.grace = grace
        self.logger = logger
        self.onAbandon = onAbandon
        state = Mutex(State(standing: standing, lastBeat: now))
        let thread = Thread { [self] in watch() }
        thread.name = "fluxbus-liveness"
        thread.start()
    }

    // MARK: - The I/O thread's side

    /// The I/O thread enters the engine with an input; `ticking` when that input is its heartbeat timer.
    func enter(at now: MonotonicTime, standing: Standing, ticking: Bool) {
        state.withLock { state in
            state.busySince = now
            state.standing = standing
            if ticking { state.lastBeat = now }
        }
    }

    /// The I/O thread is back from the engine; it waits here while the guard is using the DEALER.
    func leave() -> Verdict {
        state.withLock { state in
            state.busySince = nil
            state.reported = false
            if state.abandoned { return .abandoned }
            return state.stopAskedAt == nil ? .carryOn : .stopAsked
        }
    }

    // MARK: - Any thread

    /// A graceful stop began (SIGTERM, ``Worker/stop()``): the I/O thread has ``grace`` to come back from the engine.
    func stopAsked(at now: MonotonicTime) {
        state.withLock { state in
            if state.stopAskedAt == nil { state.stopAskedAt = now }
        }
        wake.signal()
    }

    /// Whether the guard gave up on the I/O thread and said GOODBYE for it.
    var isAbandoned: Bool { state.withLock { $0.abandoned } }

    /// Ends the guard's thread (the worker stopped).
    func finish() {
        state.withLock { $0.ended = true }
        wake.signal()
    }

    // MARK: - The guard's thread

    private func watch() {
        while true {
            let period = state.withLock { state in state.ended || state.abandoned ? nil : state.standing.heartbeat / 4 }
            guard let period else { return }
            _ = wake.wait(timeout: .now() + .nanoseconds(Int(max(period, .milliseconds(5)).nanosecondsClamped)))
            switch look(at: SystemClock.now) {
            case .nothing:
                break
            case .beatLong(let busy, let applied):
                logger.notice("a handler is taking long; heartbeating for it meanwhile", metadata: [
                    "busyMillis": "\(busy.milliseconds)", "seq": "\(applied)",
                ])
            case .abandoned(let busy):
                logger.warning("stopping without waiting for the handler in hand: its outcome on this worker stays unknown, and a restart replays it", metadata: [
                    "busyMillis": "\(busy.milliseconds)",
                ])
                // libzmq writes the GOODBYE from its own thread; the context is never terminated (that would wait
                // for the I/O thread's sockets), so give it a moment before the process may exit.
                Thread.sleep(forTimeInterval: 0.1)
                onAbandon()
                return
            }
        }
    }

    private enum Look {
        case nothing
        /// Beat for a handler busy this long: worth a log line, once per busy stretch.
        case beatLong(busy: Duration, applied: UInt64)
        case abandoned(busy: Duration)
    }

    /// One look at the I/O thread, acting under the lock; the logging waits until the lock is released.
    private func look(at now: MonotonicTime) -> Look {
        state.withLock { state in
            guard !state.ended, !state.abandoned, let since = state.busySince else { return .nothing }
            if let asked = state.stopAskedAt, now - asked >= grace {
                send(.goodbye(.init(reason: "shutting down; a handler was still running \(grace.milliseconds) ms after the stop began")))
                state.abandoned = true
                return .abandoned(busy: now - since)
            }
            let standing = state.standing
            guard standing.mayHeartbeat, now - state.lastBeat >= standing.heartbeat * 3 / 2 else { return .nothing }
            send(.heartbeat(.init(epoch: standing.epoch, sequence: standing.applied)))
            state.lastBeat = now
            guard !state.reported, now - since >= standing.heartbeat else { return .nothing }
            state.reported = true
            return .beatLong(busy: now - since, applied: standing.applied)
        }
    }

    /// Only with `state`'s lock held and the I/O thread inside the engine (see the type's comment).
    private func send(_ message: Message) {
        do {
            _ = try dealer.send(codec.encode(message), nonBlocking: true)
        } catch {
            logger.warning("cannot send \(message.command) for the busy I/O thread: \(error)")
        }
    }
}
