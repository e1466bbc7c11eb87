import CZMQ

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An error reported by libzmq (or by this wrapper) for one operation.
///
/// It carries `zmq_errno()` at the time of the failure, libzmq's `zmq_strerror` text for it, and the operation that
/// failed with its input (for example `bind tcp://127.0.0.1:7400`). Compare ``code`` against the well-known codes, or
/// use the shortcuts ``isWouldBlock``, ``isInterrupted``, ``isTerminated`` and ``isHostUnreachable``.
///
/// Where these three arise the wrapper already handles them, so they never crash a program:
/// - `EAGAIN` (would block): ``ZMQSocket/tryReceive()`` returns `nil` and a non-blocking
///   `send(_:nonBlocking:)` returns `false`; a blocking call throws it only when a
///   send or receive timeout set on the socket expired.
/// - `EINTR` (a signal arrived): blocking calls retry by themselves.
/// - `ETERM` (the context was shut down): every call on a socket of that context throws it. Close the socket.
///
/// ```swift
/// do {
///     try router.send([Array("nobody".utf8), Array("hello".utf8)])
/// } catch let error as ZMQError where error.code == .hostUnreachable {
///     // "send frame 1/2 on ROUTER socket: Host unreachable (errno 113): no peer has this routing id …"
///     print(error)
/// }
/// ```
///
/// The socket, context, poller and CURVE calls throw `ZMQError` only (typed throws), so inside a
/// `do throws(ZMQError)` block `catch` binds a `ZMQError` without a cast.
public struct ZMQError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The error number: a POSIX `errno` value or one of libzmq's own (such as `ETERM`).
    public let errno: Int32
    /// libzmq's text for ``errno`` (`zmq_strerror`).
    public let message: String
    /// What failed, with its input, for example `connect tcp://127.0.0.1:7401`.
    public let operation: String

    /// Creates an error for `errno`; the message defaults to libzmq's `zmq_strerror` text.
    ///
    /// - Parameters:
    ///   - errno: The error number.
    ///   - operation: What failed, with its input.
    ///   - message: Overrides libzmq's text for `errno`.
    public init(errno: Int32, operation: String, message: String? = nil) {
        self.errno = errno
        self.operation = operation
        self.message = message ?? String(cString: zmq_strerror(errno))
    }

    /// The error number as a ``Code``, for matching against the well-known ones.
    public var code: Code { Code(rawValue: errno) }

    /// `EAGAIN`: nothing to receive, the high-water mark was reached, or a socket timeout expired.
    public var isWouldBlock: Bool { code == .wouldBlock }
    /// `EINTR`: a signal interrupted a blocking call. The wrapper retries these; you will rarely see one.
    public var isInterrupted: Bool { code == .interrupted }
    /// `ETERM`: the socket's context was shut down (or the I/O loop has stopped). Close the socket.
    public var isTerminated: Bool { code == .terminated }
    /// `EHOSTUNREACH`: a ROUTER with `routerMandatory` was asked to send to an unknown routing id.
    public var isHostUnreachable: Bool { code == .hostUnreachable }

    public var description: String {
        let hint = code.hint.map { ": \($0)" } ?? ""
        return "\(operation): \(message) (errno \(errno))\(hint)"
    }
}

extension ZMQError {
    /// An error number, open to values this wrapper does not name.
    public struct Code: RawRepresentable, Hashable, Sendable {
        public let rawValue: Int32
        public init(rawValue: Int32) { self.rawValue = rawValue }

        /// `EAGAIN`: the operation would block.
        public static let wouldBlock = Code(rawValue: EAGAIN)
        /// `EINTR`: interrupted by a signal.
        public static let interrupted = Code(rawValue: EINTR)
        /// `ETERM`: the context was terminated.
        public static let terminated = Code(rawValue: ETERM)
        /// `EHOSTUNREACH`: no peer with that routing id (ROUTER with `routerMandatory`).
        public static let hostUnreachable = Code(rawValue: EHOSTUNREACH)
        /// `EINVAL`: an invalid argument, such as a malformed endpoint or option value.
        public static let invalidArgument = Code(rawValue: EINVAL)
        /// `EADDRINUSE`: the address is already bound.
        public static let addressInUse = Code(rawValue: EADDRINUSE)
        /// `ENOTSOCK`: the socket was already closed.
        public static let notSocket = Code(rawValue: ENOTSOCK)
        /// `ENOTSUP`: not supported by this socket type or by this build of libzmq.
        public static let notSupported = Code(rawValue: ENOTSUP)
        /// `EFSM`: the operation is not allowed in the socket's current state (REQ/REP lock-step).
        public static let wrongState = Code(rawValue: EFSM)
        /// `EPROTO`: a peer or handler sent something that does not follow the protocol.
        public static let protocolError = Code(rawValue: EPROTO)

        /// What to do about it, for the few codes where that is clear.
        var hint: String? {
            switch self {
            case .wouldBlock: "no message is ready, the high-water mark was reached, or the socket's timeout expired"
            case .terminated: "context terminated; close the socket"
            case .hostUnreachable: "no peer has this routing id (ROUTER_MANDATORY is on); it may not be connected yet"
            case .addressInUse: "another socket or process already bound this address; pick another (for TCP, another port or :*)"
            case .notSocket: "the socket is closed"
            case .wrongState: "REQ/REP sockets must alternate send and receive"
            default: nil
            }
        }
    }
}

extension ZMQError {
    /// The error libzmq reported for the call that just returned -1.
    static func last(_ operation: String) -> ZMQError {
        ZMQError(errno: zmq_errno(), operation: operation)
    }

    /// Runs one libzmq call and turns its `-1` into a thrown ``ZMQError``; the single place every call goes through.
    ///
    /// `EINTR` is retried (the call is simply made again), so a signal never surfaces as an error.
    @discardableResult
    static func check(_ operation: @autoclosure () -> String, _ call: () -> Int32) throws(ZMQError) -> Int32 {
        while true {
            let result = call()
            if result != -1 { return result }
            let code = zmq_errno()
            if code == EINTR { continue }
            throw ZMQError(errno: code, operation: operation())
        }
    }
}

/// The calling thread's `errno`, for the few plain POSIX calls the module makes.
func systemErrno() -> Int32 {
    #if canImport(Glibc)
    Glibc.errno
    #else
    Darwin.errno
    #endif
}
