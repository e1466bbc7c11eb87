import CZMQ
import Synchronization

/// A libzmq context: the I/O threads and the `inproc://` namespace that its sockets share.
///
/// Create one per process (or per test) and hand it to every socket and ``IOLoop``. Sockets created from the same
/// context can talk over `inproc://`; sockets from different contexts cannot.
///
/// A context never hangs the process at exit. Every socket created from it gets ``defaultLinger`` (200 ms unless you
/// choose otherwise) instead of libzmq's "wait forever", so pending outgoing messages are dropped after that time.
/// Termination is ordered: each socket holds its context, so the context is terminated (`zmq_ctx_shutdown`, then
/// `zmq_ctx_term`) when the last socket has closed and the last reference is gone. ``shutdown()`` is the way to
/// interrupt sockets that are blocked in other threads.
///
/// `ZMQContext` is `Sendable`: libzmq documents contexts as thread-safe, and this class adds only an atomic flag.
///
/// ```swift
/// let context = try ZMQContext()
/// let publisher = try ZMQSocket(.pub, context: context)
/// try publisher.bind("tcp://127.0.0.1:*")
/// ```
public final class ZMQContext: Sendable {
    /// The `void *` libzmq context. Safe to share: libzmq contexts are thread-safe, and the pointer itself never
    /// changes; it is released only in `deinit`, when no socket and no other reference remains.
    nonisolated(unsafe) let handle: UnsafeMutableRawPointer

    /// The `ZMQ_LINGER` given to every socket created from this context; `nil` means libzmq's "wait forever".
    public let defaultLinger: Duration?

    private let shutDown = Atomic<Bool>(false)

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
    /// and every later call on them throws a ``ZMQError`` with ``ZMQError/isTerminated``.
    ///
    /// Sockets still have to be closed by the threads that own them; an ``IOLoop`` on this context stops and closes
    /// its sockets by itself. Calling `shutdown()` more than once is harmless.
    public func shutdown() {
        if shutDown.exchange(true, ordering: .acquiringAndReleasing) { return }
        zmq_ctx_shutdown(handle)
    }

    /// Whether ``shutdown()`` was called.
    public var isShutDown: Bool { shutDown.load(ordering: .acquiring) }

    deinit {
        // Every socket keeps its context alive, so none is open here and zmq_ctx_term returns once the I/O threads
        // have stopped (after at most the sockets' linger). EINTR only means "call it again".
        if !shutDown.load(ordering: .acquiring) { zmq_ctx_shutdown(handle) }
        while zmq_ctx_term(handle) == -1 && zmq_errno() == EINTR {}
    }
}
