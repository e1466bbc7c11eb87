import CZMQ
import Foundation
import Synchronization

/// A libzmq context: the I/O threads and the `inproc://` namespace that its sockets share.
///
/// Create one per process (or per test) and hand it to every socket and ``IOLoop``. Sockets created from the same
/// context can talk over `inproc://`; sockets from different contexts cannot.
///
/// A context never hangs the process at exit. Every socket created from it gets ``defaultLinger`` (200 ms unless
/// you choose otherwise) instead of libzmq's "wait forever", so messages still pending when a socket closes are
/// dropped after that time. Termination is ordered:
/// 1. ``shutdown()`` (`zmq_ctx_shutdown`) makes every blocking call on the context's sockets return `ETERM` at
///    once, in every thread, and refuses new sockets. Owners then close their sockets; an ``IOLoop`` does so by
///    itself.
/// 2. ``terminate()`` (`zmq_ctx_term`, after a shutdown) waits until every socket is closed and has lingered, then
///    frees the context. From async code, `await terminate()` does that wait on a thread of its own, never on the
///    cooperative pool.
/// 3. If neither was called, the last reference going away does both. Each socket keeps its context alive, so by
///    then every socket is closed, and the wait is at most the linger of messages still pending.
///
/// `ZMQContext` is `Sendable`: libzmq documents contexts as thread-safe, and this class adds only a `Mutex`.
///
/// ```swift
/// let context = try ZMQContext()
/// let loop = try IOLoop(context: context)
/// // … serve sockets on the loop …
/// await loop.shutdown()        // closes the loop's sockets
/// await context.terminate()    // returns once they have lingered
/// ```
public final class ZMQContext: Sendable {
    /// The `void *` libzmq context. Sharing it is safe: libzmq contexts are thread-safe. It is freed only by the
    /// one `zmq_ctx_term` call, after which ``phase`` keeps every other use away from it.
    nonisolated(unsafe) private let handle: UnsafeMutableRawPointer

    /// The `ZMQ_LINGER` given to every socket created from this context; `nil` means libzmq's "wait forever".
    public let defaultLinger: Duration?

    private let phase = Mutex(Phase.open)
    private let terminated = Completion()

    private enum Phase {
        case open
        case shutDown
        /// `zmq_ctx_term` was called (it may still be waiting): the handle must not be used any more.
        case terminating
    }

    /// Creates a context.
    ///
    /// - Parameters:
    ///   - ioThreads: The number of libzmq I/O threads. One is plenty below about a gigabyte per second.
    ///   - defaultLinger: How long a closed socket may keep trying to deliver its pending messages. Keep it short:
    ///     terminating the context waits for it. `nil` waits forever, which can hang a process at exit.
    /// - Throws: ``ZMQError`` if libzmq cannot create the context (for example `EMFILE`) or rejects `ioThreads`.
    public init(ioThreads: Int32 = 1, defaultLinger: Duration? = .milliseconds(200)) throws(ZMQError) {
        guard let handle = zmq_ctx_new() else { throw ZMQError.last("create context") }
        self.handle = handle
        self.defaultLinger = defaultLinger
        do {
            try ZMQError.check("set context I/O threads to \(ioThreads)") {
                zmq_ctx_set(handle, ZMQ_IO_THREADS, ioThreads)
            }
        } catch {
            zmq_ctx_term(handle)
            throw error
        }
    }

    /// Shuts the context down without waiting: every blocking call on its sockets, in any thread, returns at once,
    /// every later call on them throws a ``ZMQError`` with ``ZMQError/isTerminated``, and no new socket can be
    /// created. Sockets still have to be closed by the threads that own them. Calling it again does nothing.
    public func shutdown() {
        phase.withLock { phase in
            guard phase == .open else { return }
            phase = .shutDown
            zmq_ctx_shutdown(handle)
        }
    }

    /// Whether ``shutdown()`` or ``terminate()`` was called.
    public var isShutDown: Bool { phase.withLock { $0 != .open } }

    /// Shuts the context down, waits until every one of its sockets is closed and has lingered, and frees it.
    ///
    /// The wait lasts as long as some socket stays open, so call it after the sockets' owners have closed them
    /// (or will, on seeing `ETERM`); never on the thread that owns an open socket, which would wait for itself.
    /// Calling it again, from any thread, waits for the same termination. From async code, use `await terminate()`.
    public func terminate() {
        if beginTermination() {
            finishTermination()
        } else {
            terminated.waitBlocking()
        }
    }

    /// Shuts the context down and suspends until it is terminated; see ``terminate()``. The waiting happens on a
    /// dedicated thread, not on the cooperative pool. If the task is cancelled it stops waiting, and termination
    /// goes on in the background.
    public func terminate() async {
        if beginTermination() {
            let thread = Thread { [self] in finishTermination() }
            thread.name = "zmq-ctx-term"
            thread.start()
        }
        await terminated.wait()
    }

    /// Whether ``terminate()`` has finished.
    public var isTerminated: Bool { terminated.isComplete }

    /// Creates a libzmq socket, or throws `ETERM` once the context is shut down.
    func makeSocket(_ type: SocketType) throws(ZMQError) -> SocketHandle {
        try phase.withLock { phase throws(ZMQError) in
            // Checked under the lock so that the handle cannot be freed by a termination in the meantime.
            guard phase == .open else { throw ZMQError(errno: ETERM, operation: "create \(type) socket") }
            guard let socket = zmq_socket(handle, type.rawValue) else { throw ZMQError.last("create \(type) socket") }
            return SocketHandle(pointer: socket)
        }
    }

    /// Claims the one `zmq_ctx_term` call; `false` if another caller already has it.
    private func beginTermination() -> Bool {
        phase.withLock { phase in
            switch phase {
            case .open:
                zmq_ctx_shutdown(handle)
            case .shutDown:
                break
            case .terminating:
                return false
            }
            phase = .terminating
            return true
        }
    }

    private func finishTermination() {
        // EINTR only means "call it again".
        while zmq_ctx_term(handle) == -1 && zmq_errno() == EINTR {}
        terminated.complete()
    }

    deinit {
        // No socket is open here (each keeps its context alive), so this waits only for pending messages to linger.
        if beginTermination() { finishTermination() }
    }
}

/// A new libzmq socket pointer, handed from the context's lock to the ``ZMQSocket`` that owns it from then on.
struct SocketHandle: @unchecked Sendable {
    // @unchecked Sendable is sound: the pointer is created inside the lock and has exactly one recipient, the
    // ZMQSocket under construction; nothing else ever sees it.
    let pointer: UnsafeMutableRawPointer
}
