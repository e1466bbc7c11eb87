import CZMQ

/// A socket event reported by ``ZMQMonitor`` (`ZMQ_EVENT_*`).
///
/// The value that comes with each event (see ``MonitorRecord/value``) depends on the event: a file descriptor, an
/// `errno`, a reconnect interval in milliseconds, a ZAP status code or a `ZMQ_PROTOCOL_ERROR_*` code.
public enum MonitorEvent: Sendable, Hashable, CustomStringConvertible {
    /// A connection to a peer was made (value: its file descriptor).
    case connected
    /// A connect did not complete at once and is still in progress.
    case connectDelayed
    /// A reconnect was scheduled (value: the interval in milliseconds).
    case connectRetried
    /// A bind succeeded (value: the listening file descriptor).
    case listening
    /// A bind failed (value: the `errno`).
    case bindFailed
    /// A bound socket accepted a connection (value: its file descriptor).
    case accepted
    /// Accepting a connection failed (value: the `errno`).
    case acceptFailed
    /// A connection's file descriptor was closed.
    case closed
    /// Closing a file descriptor failed (value: the `errno`).
    case closeFailed
    /// A connection broke: the peer left, a heartbeat timed out, or a message exceeded `maxMessageSize`.
    case disconnected
    /// Monitoring stopped; this is the last event.
    case monitorStopped
    /// A handshake failed for a system reason (value: the `errno`).
    case handshakeFailedNoDetail
    /// The ZMTP handshake, and authentication if any, succeeded.
    case handshakeSucceeded
    /// The handshake broke the protocol, for example a CURVE client using the wrong server key (value: a
    /// `ZMQ_PROTOCOL_ERROR_*` code).
    case handshakeFailedProtocol
    /// The ZAP handler refused the peer (value: its status code, such as 400).
    case handshakeFailedAuth
    /// An event this wrapper does not know.
    case unknown(UInt16)

    /// Every known event, in libzmq's order.
    public static let known: [MonitorEvent] = [
        .connected, .connectDelayed, .connectRetried, .listening, .bindFailed, .accepted, .acceptFailed, .closed,
        .closeFailed, .disconnected, .monitorStopped, .handshakeFailedNoDetail, .handshakeSucceeded,
        .handshakeFailedProtocol, .handshakeFailedAuth,
    ]

    /// Decodes libzmq's event number.
    public init(rawValue: UInt16) {
        self = Self.known.first { $0.rawValue == rawValue } ?? .unknown(rawValue)
    }

    /// libzmq's event number (a single bit).
    public var rawValue: UInt16 {
        switch self {
        case .connected: UInt16(ZMQ_EVENT_CONNECTED)
        case .connectDelayed: UInt16(ZMQ_EVENT_CONNECT_DELAYED)
        case .connectRetried: UInt16(ZMQ_EVENT_CONNECT_RETRIED)
        case .listening: UInt16(ZMQ_EVENT_LISTENING)
        case .bindFailed: UInt16(ZMQ_EVENT_BIND_FAILED)
        case .accepted: UInt16(ZMQ_EVENT_ACCEPTED)
        case .acceptFailed: UInt16(ZMQ_EVENT_ACCEPT_FAILED)
        case .closed: UInt16(ZMQ_EVENT_CLOSED)
        case .closeFailed: UInt16(ZMQ_EVENT_CLOSE_FAILED)
        case .disconnected: UInt16(ZMQ_EVENT_DISCONNECTED)
        case .monitorStopped: UInt16(ZMQ_EVENT_MONITOR_STOPPED)
        case .handshakeFailedNoDetail: UInt16(ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL)
        case .handshakeSucceeded: UInt16(ZMQ_EVENT_HANDSHAKE_SUCCEEDED)
        case .handshakeFailedProtocol: UInt16(ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL)
        case .handshakeFailedAuth: UInt16(ZMQ_EVENT_HANDSHAKE_FAILED_AUTH)
        case .unknown(let raw): raw
        }
    }

    public var description: String {
        switch self {
        case .connected: "connected"
        case .connectDelayed: "connectDelayed"
        case .connectRetried: "connectRetried"
        case .listening: "listening"
        case .bindFailed: "bindFailed"
        case .accepted: "accepted"
        case .acceptFailed: "acceptFailed"
        case .closed: "closed"
        case .closeFailed: "closeFailed"
        case .disconnected: "disconnected"
        case .monitorStopped: "monitorStopped"
        case .handshakeFailedNoDetail: "handshakeFailedNoDetail"
        case .handshakeSucceeded: "handshakeSucceeded"
        case .handshakeFailedProtocol: "handshakeFailedProtocol"
        case .handshakeFailedAuth: "handshakeFailedAuth"
        case .unknown(let raw): "unknown(0x\(String(raw, radix: 16)))"
        }
    }
}
