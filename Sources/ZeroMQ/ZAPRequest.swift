#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An authentication request from libzmq to a ZAP handler (ZeroMQ RFC 27).
///
/// When a socket with a security mechanism (or a ``SocketOption/zapDomain``) accepts a connection, libzmq asks the
/// handler bound at ``endpoint`` in the same context whether to admit the peer. The handler answers each request
/// with a ``ZAPReply``. ``IOLoopScope/serveZAP(_:)`` runs such a handler on an I/O loop; this type is the parser for
/// anyone who runs their own.
///
/// ```swift
/// let allowed: Set<String> = [worker.publicKey]
/// try scope.serveZAP { request in
///     guard let key = request.curvePublicKey, allowed.contains(key) else {
///         return .deny(request, statusText: "unknown key")
///     }
///     return .allow(request, userID: key)
/// }
/// ```
public struct ZAPRequest: Sendable, Hashable {
    /// Where libzmq sends ZAP requests: `inproc://zeromq.zap.01`.
    public static let endpoint = "inproc://zeromq.zap.01"

    /// The protocol version, `"1.0"`.
    public let version: String
    /// An opaque id to echo in the reply.
    public let requestID: [UInt8]
    /// The server socket's ``SocketOption/zapDomain``.
    public let domain: String
    /// The peer's address, such as `127.0.0.1`.
    public let address: String
    /// The peer's routing id, if it set one (``SocketOption/routingID``).
    public let routingID: [UInt8]
    /// `"NULL"`, `"PLAIN"`, `"CURVE"` or `"GSSAPI"`.
    public let mechanism: String
    /// The mechanism's credentials: none for NULL, user name and password for PLAIN, the client's 32-byte public
    /// key for CURVE.
    public let credentials: [[UInt8]]

    /// For CURVE, the client's long-term public key in Z85 (40 characters): its identity.
    public var curvePublicKey: String? {
        guard mechanism == "CURVE", credentials.count == 1, credentials[0].count == 32 else { return nil }
        return Z85.encode(credentials[0])
    }

    /// Parses the frames of a request as a REP socket receives them (a ROUTER must drop the envelope first).
    ///
    /// - Throws: ``ZMQError`` with `EPROTO` if there are fewer than six frames or the version is not `"1.0"`.
    public init(frames: [[UInt8]]) throws(ZMQError) {
        guard frames.count >= 6 else {
            throw ZMQError(errno: EPROTO, operation: "parse ZAP request of \(frames.count) frames (expected 6 or more)")
        }
        let text = { (index: Int) in String(decoding: frames[index], as: UTF8.self) }
        version = text(0)
        guard version == "1.0" else {
            throw ZMQError(errno: EPROTO, operation: "parse ZAP request of version \"\(version)\" (expected 1.0)")
        }
        requestID = frames[1]
        domain = text(2)
        address = text(3)
        routingID = frames[4]
        mechanism = text(5)
        credentials = Array(frames.dropFirst(6))
    }
}
