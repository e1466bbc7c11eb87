import CZMQ

/// A libzmq socket: endpoints, multipart messages and typed options.
///
/// A socket belongs to one thread at a time, as libzmq requires, so `ZMQSocket` is deliberately **not** `Sendable`:
/// the compiler keeps it in the isolation domain that created it. To serve sockets from async code, create them on
/// an ``IOLoop`` (its closures run on the loop's own thread) rather than on Swift's cooperative thread pool, where a
/// blocking receive would hold up other tasks.
///
/// The socket is closed by ``close()`` or when it is deallocated, with its context's
/// ``ZMQContext/defaultLinger``. A closed socket throws `ENOTSOCK` from every call.
///
/// ```swift
/// let context = try ZMQContext()
/// let server = try ZMQSocket(.rep, context: context)
/// try server.bind("tcp://127.0.0.1:*")
/// let client = try ZMQSocket(.req, context: context)
/// try client.connect(try server.lastEndpoint)
/// try client.send(Array("ping".utf8))
/// let request = try server.receive()        // [[0x70, 0x69, 0x6e, 0x67]]
/// try server.send(Array("pong".utf8))
/// let reply = try client.receive(timeout: .seconds(1))
/// ```
public final class ZMQSocket {
    /// The socket's pattern.
    public let type: SocketType
    /// The context the socket was created from; the socket keeps it alive.
    public let context: ZMQContext
    /// The libzmq `void *` socket, or `nil` once closed.
    private(set) var handle: UnsafeMutableRawPointer?
    /// The libzmq calls made on the socket so far. Any of them may take the commands waiting in the socket's mailbox,
    /// and with them the signal of its `ZMQ_FD`; an ``IOLoop`` reads this to know which sockets to ask again.
    private(set) var operations: UInt64 = 0
    /// ``operations`` just after the last receive that found nothing (`EAGAIN`). libzmq processed every command
    /// waiting in the mailbox first, so while no other call follows, the socket is known unreadable and its `ZMQ_FD`
    /// fires for whatever comes next: as good as a `ZMQ_EVENTS`, at no cost.
    private(set) var drainedAt: UInt64?

    /// Notes that the receive just made found nothing; see ``drainedAt``.
    func noteDrained() { drainedAt = operations }

    /// Creates a socket of `type` in `context` and applies the context's ``ZMQContext/defaultLinger``.
    ///
    /// - Throws: ``ZMQError``: ``ZMQError/isTerminated`` if the context was shut down, `EMFILE` past the context's
    ///   socket limit.
    public init(_ type: SocketType, context: ZMQContext) throws(ZMQError) {
        self.type = type
        self.context = context
        self.handle = try context.makeSocket(type).pointer
        try set(.linger, to: context.defaultLinger)
    }

    deinit { close() }

    /// Whether ``close()`` was called.
    public var isClosed: Bool { handle == nil }

    /// Closes the socket. Pending outgoing messages are delivered for at most the socket's ``SocketOption/linger``.
    /// Calling it again does nothing.
    public func close() {
        guard let handle else { return }
        self.handle = nil
        zmq_close(handle)
    }

    /// Accepts connections on `endpoint`.
    ///
    /// - Parameter endpoint: `tcp://127.0.0.1:7400`, `tcp://127.0.0.1:*` (an ephemeral port: read the real one from
    ///   ``lastEndpoint``), `ipc:///tmp/name` or `inproc://name`.
    /// - Throws: ``ZMQError``: `EADDRINUSE` (for `ipc://` too: a socket file some process still listens on, which
    ///   libzmq alone would take over; see `IPCSocketFile`), `EINVAL` for a malformed endpoint, `EPROTONOSUPPORT`
    ///   for an unknown transport.
    public func bind(_ endpoint: String) throws(ZMQError) {
        if handle != nil, let file = IPCSocketFile(endpoint: endpoint), file.hasListener {
            throw file.inUse(operation: "bind \(endpoint)")
        }
        try call("bind \(endpoint)") { zmq_bind($0, endpoint) }
    }

    /// Connects to `endpoint`. This returns at once: libzmq connects (and reconnects) in the background, so a
    /// message sent right after `connect` may still be lost or queued, depending on the pattern (see
    /// `docs/ZEROMQ.md`, "slow joiners").
    ///
    /// - Throws: ``ZMQError``: `EINVAL` for a malformed endpoint, `EPROTONOSUPPORT` for an unknown transport.
    public func connect(_ endpoint: String) throws(ZMQError) {
        try call("connect \(endpoint)") { zmq_connect($0, endpoint) }
    }

    /// Stops accepting on an endpoint given to ``bind(_:)``. For a wildcard bind, pass the resolved
    /// ``lastEndpoint``, not the `*` form.
    ///
    /// - Throws: ``ZMQError``: `ENOENT` if the socket is not bound to it.
    public func unbind(_ endpoint: String) throws(ZMQError) {
        try call("unbind \(endpoint)") { zmq_unbind($0, endpoint) }
    }

    /// Drops the connection made by ``connect(_:)``.
    ///
    /// - Throws: ``ZMQError``: `ENOENT` if the socket is not connected to it.
    public func disconnect(_ endpoint: String) throws(ZMQError) {
        try call("disconnect \(endpoint)") { zmq_disconnect($0, endpoint) }
    }

    /// The endpoint of the last ``bind(_:)`` or ``connect(_:)``, resolved: `tcp://127.0.0.1:*` reads back with the
    /// port the kernel chose.
    ///
    /// - Throws: ``ZMQError`` if the socket is closed.
    public var lastEndpoint: String {
        get throws(ZMQError) { try get(.lastEndpoint) }
    }

    /// Makes one libzmq call on the open socket through ``ZMQError/check(_:_:)``.
    @discardableResult
    func call(_ operation: @autoclosure () -> String, _ body: (UnsafeMutableRawPointer) -> Int32)
        throws(ZMQError) -> Int32
    {
        guard let handle else {
            throw ZMQError(errno: ENOTSOCK, operation: "\(operation()) on a closed \(type) socket")
        }
        operations &+= 1
        return try ZMQError.check(operation()) { body(handle) }
    }

    /// As ``call(_:_:)``, but a call that would block returns nil without building an error: every drain of a
    /// socket ends that way, and describing the operation costs more than the receive itself.
    func callUnlessWouldBlock(_ operation: @autoclosure () -> String, _ body: (UnsafeMutableRawPointer) -> Int32)
        throws(ZMQError) -> Int32?
    {
        guard let handle else {
            throw ZMQError(errno: ENOTSOCK, operation: "\(operation()) on a closed \(type) socket")
        }
        operations &+= 1
        while true {
            let result = body(handle)
            if result != -1 { return result }
            let code = zmq_errno()
            if code == EINTR { continue }
            if code == EAGAIN { return nil }
            throw ZMQError(errno: code, operation: operation())
        }
    }
}

/// Sockets belong to one thread; see ``ZMQSocket``.
@available(*, unavailable)
extension ZMQSocket: Sendable {}
