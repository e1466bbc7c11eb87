/// A ZAP handler's answer to a ``ZAPRequest`` (ZeroMQ RFC 27).
///
/// ```swift
/// let reply: ZAPReply = allowed ? .allow(request, userID: "worker-1") : .deny(request, statusText: "unknown key")
/// try zapSocket.send(reply.frames)
/// ```
public struct ZAPReply: Sendable, Hashable {
    /// A ZAP status code.
    public struct StatusCode: RawRepresentable, Sendable, Hashable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// `200`: admitted.
        public static let success = StatusCode(rawValue: "200")
        /// `300`: a temporary failure; the client may retry.
        public static let temporaryError = StatusCode(rawValue: "300")
        /// `400`: refused.
        public static let authenticationFailure = StatusCode(rawValue: "400")
        /// `500`: the handler failed.
        public static let internalError = StatusCode(rawValue: "500")
    }

    /// The request id, echoed from the request.
    public var requestID: [UInt8]
    /// The verdict.
    public var statusCode: StatusCode
    /// A reason for humans.
    public var statusText: String
    /// The user id libzmq attaches to the connection's messages (metadata `User-Id`) when admitted.
    public var userID: String
    /// ZMTP-encoded metadata for the connection; usually empty.
    public var metadata: [UInt8]

    /// Creates a reply.
    public init(requestID: [UInt8], statusCode: StatusCode, statusText: String, userID: String = "",
                metadata: [UInt8] = []) {
        self.requestID = requestID
        self.statusCode = statusCode
        self.statusText = statusText
        self.userID = userID
        self.metadata = metadata
    }

    /// Admits the peer of `request`.
    public static func allow(_ request: ZAPRequest, userID: String = "") -> ZAPReply {
        ZAPReply(requestID: request.requestID, statusCode: .success, statusText: "OK", userID: userID)
    }

    /// Refuses the peer of `request` with status 400.
    public static func deny(_ request: ZAPRequest, statusText: String = "Access denied") -> ZAPReply {
        ZAPReply(requestID: request.requestID, statusCode: .authenticationFailure, statusText: statusText)
    }

    /// The reply's frames for a REP socket: version, request id, status code, status text, user id, metadata.
    public var frames: [[UInt8]] {
        [Array("1.0".utf8), requestID, Array(statusCode.rawValue.utf8), Array(statusText.utf8), Array(userID.utf8),
         metadata]
    }
}
