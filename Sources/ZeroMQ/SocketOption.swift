import CZMQ

/// A typed libzmq socket option, for ``ZMQSocket/set(_:to:)`` and ``ZMQSocket/get(_:)``.
///
/// Times are `Duration`s (libzmq counts milliseconds, or seconds for the TCP keepalive ones), counts are `Int32`,
/// identities are bytes and CURVE keys are 40-character Z85 strings. Where libzmq uses `-1` for "no limit" or "the
/// default", the Swift value is `nil`.
///
/// ```swift
/// try router.set(.routerMandatory, to: true)
/// try router.set(.receiveHighWaterMark, to: 10_000)
/// try router.set(.heartbeatInterval, to: .seconds(1))
/// let linger = try router.get(.linger)   // Optional(200 milliseconds)
/// ```
///
/// Some options are write-only in libzmq (``routerMandatory``, ``routerHandover``, ``xpubNoDrop``,
/// ``xpubVerbose``); reading them throws `EINVAL`. Some are read-only (``lastEndpoint``, ``events``,
/// ``fileDescriptor``); setting them throws `EINVAL`.
public struct SocketOption<Value>: Sendable, CustomStringConvertible {
    /// The option's Swift name, used in error messages.
    public let name: String
    /// The `ZMQ_*` constant.
    let code: Int32
    let representation: Representation
    let encode: @Sendable (Value) -> RawValue
    let decode: @Sendable (RawValue) -> Value

    public var description: String { name }

    /// How libzmq stores the option.
    enum Representation: Sendable {
        case int32
        case int64
        /// A byte string of at most `capacity` bytes (including a C string's terminating zero).
        case bytes(capacity: Int)
    }

    /// An option value as libzmq sees it.
    enum RawValue: Sendable {
        case int32(Int32)
        case int64(Int64)
        case bytes([UInt8])

        var int32: Int32 {
            if case .int32(let value) = self { return value }
            preconditionFailure("\(self) read as an Int32 option")
        }
        var int64: Int64 {
            if case .int64(let value) = self { return value }
            preconditionFailure("\(self) read as an Int64 option")
        }
        var bytes: [UInt8] {
            if case .bytes(let value) = self { return value }
            preconditionFailure("\(self) read as a byte option")
        }
    }
}

// MARK: - Building options from their representation

extension SocketOption {
    static func int32(_ name: String, _ code: Int32, encode: @escaping @Sendable (Value) -> Int32,
                      decode: @escaping @Sendable (Int32) -> Value) -> Self {
        Self(name: name, code: code, representation: .int32, encode: { .int32(encode($0)) },
             decode: { decode($0.int32) })
    }

    static func bytes(_ name: String, _ code: Int32, capacity: Int, encode: @escaping @Sendable (Value) -> [UInt8],
                      decode: @escaping @Sendable ([UInt8]) -> Value) -> Self {
        Self(name: name, code: code, representation: .bytes(capacity: capacity), encode: { .bytes(encode($0)) },
             decode: { decode($0.bytes) })
    }
}

extension SocketOption where Value == Int32 {
    static func count(_ name: String, _ code: Int32) -> Self {
        .int32(name, code, encode: { $0 }, decode: { $0 })
    }
}

extension SocketOption where Value == Bool {
    static func flag(_ name: String, _ code: Int32) -> Self {
        .int32(name, code, encode: { $0 ? 1 : 0 }, decode: { $0 != 0 })
    }
}

extension SocketOption where Value == Duration {
    static func milliseconds(_ name: String, _ code: Int32) -> Self {
        .int32(name, code, encode: { $0.optionMilliseconds }, decode: { .milliseconds($0) })
    }
}

extension SocketOption where Value == Duration? {
    /// A time in milliseconds where `-1` (`nil`) has a meaning of its own ("forever", "never", "default").
    static func optionalMilliseconds(_ name: String, _ code: Int32) -> Self {
        .int32(name, code, encode: { $0.map(\.optionMilliseconds) ?? -1 },
               decode: { $0 < 0 ? nil : .milliseconds($0) })
    }

    /// A time in whole seconds where `-1` (`nil`) means the operating system's default.
    static func optionalSeconds(_ name: String, _ code: Int32) -> Self {
        .int32(name, code, encode: { $0.map { Int32(clamping: $0.roundedUpSeconds) } ?? -1 },
               decode: { $0 < 0 ? nil : .seconds($0) })
    }
}

extension SocketOption where Value == String {
    /// A text option; libzmq returns it with a terminating zero, which is dropped.
    static func text(_ name: String, _ code: Int32, capacity: Int) -> Self {
        .bytes(name, code, capacity: capacity, encode: { Array($0.utf8) },
               decode: { bytes in String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self) })
    }
}

// MARK: - The options

extension SocketOption where Value == Duration? {
    /// How long ``ZMQSocket/close()`` keeps pending messages for delivery (`ZMQ_LINGER`); `nil` forever.
    /// Defaults to the context's ``ZMQContext/defaultLinger``.
    public static var linger: Self { .optionalMilliseconds("linger", ZMQ_LINGER) }
    /// How long a blocking send waits before throwing `EAGAIN` (`ZMQ_SNDTIMEO`); `nil` (the default) forever.
    public static var sendTimeout: Self { .optionalMilliseconds("sendTimeout", ZMQ_SNDTIMEO) }
    /// How long ``ZMQSocket/receive()`` waits before throwing `EAGAIN` (`ZMQ_RCVTIMEO`); `nil` (the default)
    /// forever.
    public static var receiveTimeout: Self { .optionalMilliseconds("receiveTimeout", ZMQ_RCVTIMEO) }
    /// The first wait before reconnecting a lost or refused connection (`ZMQ_RECONNECT_IVL`, default 100 ms);
    /// `nil` never reconnects.
    public static var reconnectInterval: Self { .optionalMilliseconds("reconnectInterval", ZMQ_RECONNECT_IVL) }
    /// Idle time before TCP keepalive probes start (`ZMQ_TCP_KEEPALIVE_IDLE`, whole seconds); `nil` the OS default.
    public static var tcpKeepaliveIdle: Self { .optionalSeconds("tcpKeepaliveIdle", ZMQ_TCP_KEEPALIVE_IDLE) }
    /// Time between TCP keepalive probes (`ZMQ_TCP_KEEPALIVE_INTVL`, whole seconds); `nil` the OS default.
    public static var tcpKeepaliveInterval: Self {
        .optionalSeconds("tcpKeepaliveInterval", ZMQ_TCP_KEEPALIVE_INTVL)
    }
}

extension SocketOption where Value == Duration {
    /// The longest reconnect wait, doubling from ``reconnectInterval`` (`ZMQ_RECONNECT_IVL_MAX`); `.zero` (the
    /// default) keeps the interval fixed.
    public static var reconnectIntervalMax: Self { .milliseconds("reconnectIntervalMax", ZMQ_RECONNECT_IVL_MAX) }
    /// How often to send a ZMTP PING on an idle connection (`ZMQ_HEARTBEAT_IVL`); `.zero` (the default) never.
    public static var heartbeatInterval: Self { .milliseconds("heartbeatInterval", ZMQ_HEARTBEAT_IVL) }
    /// How long the peer should wait for traffic before closing the connection, sent in our PINGs
    /// (`ZMQ_HEARTBEAT_TTL`, kept in tenths of a second).
    public static var heartbeatTTL: Self { .milliseconds("heartbeatTTL", ZMQ_HEARTBEAT_TTL) }
    /// How long to wait for traffic after a PING before closing the connection (`ZMQ_HEARTBEAT_TIMEOUT`);
    /// defaults to ``heartbeatInterval``.
    public static var heartbeatTimeout: Self { .milliseconds("heartbeatTimeout", ZMQ_HEARTBEAT_TIMEOUT) }
    /// The longest a ZMTP handshake (including CURVE and ZAP) may take (`ZMQ_HANDSHAKE_IVL`, default 30 s);
    /// `.zero` is no limit.
    public static var handshakeInterval: Self { .milliseconds("handshakeInterval", ZMQ_HANDSHAKE_IVL) }
}

extension SocketOption where Value == Int32 {
    /// The most messages queued for sending per peer (`ZMQ_SNDHWM`, default 1000; `0` is no limit). Past it, PUB
    /// drops and other types block or fail with `EAGAIN`.
    public static var sendHighWaterMark: Self { .count("sendHighWaterMark", ZMQ_SNDHWM) }
    /// The most messages queued on receipt per peer (`ZMQ_RCVHWM`, default 1000; `0` is no limit).
    public static var receiveHighWaterMark: Self { .count("receiveHighWaterMark", ZMQ_RCVHWM) }
    /// The file descriptor that signals (edge-triggered) that ``events`` may have changed (`ZMQ_FD`, read-only).
    public static var fileDescriptor: Self { .count("fileDescriptor", ZMQ_FD) }
}

extension SocketOption where Value == Int32? {
    /// The number of unanswered TCP keepalive probes before the connection is dropped (`ZMQ_TCP_KEEPALIVE_CNT`);
    /// `nil` the OS default.
    public static var tcpKeepaliveCount: Self {
        .int32("tcpKeepaliveCount", ZMQ_TCP_KEEPALIVE_CNT, encode: { $0 ?? -1 }, decode: { $0 < 0 ? nil : $0 })
    }
}

extension SocketOption where Value == Bool {
    /// ROUTER: sending to an unknown routing id throws `EHOSTUNREACH` instead of dropping silently
    /// (`ZMQ_ROUTER_MANDATORY`, write-only).
    public static var routerMandatory: Self { .flag("routerMandatory", ZMQ_ROUTER_MANDATORY) }
    /// ROUTER: a new connection that presents a routing id already in use takes it over, instead of being refused
    /// (`ZMQ_ROUTER_HANDOVER`, write-only). Lets a restarted worker keep its id.
    public static var routerHandover: Self { .flag("routerHandover", ZMQ_ROUTER_HANDOVER) }
    /// Queue messages only to completed connections, so a DEALER or PUSH does not fill a pipe to a peer that is
    /// not there yet (`ZMQ_IMMEDIATE`).
    public static var immediate: Self { .flag("immediate", ZMQ_IMMEDIATE) }
    /// XPUB: at the high-water mark, fail the send with `EAGAIN` instead of dropping (`ZMQ_XPUB_NODROP`,
    /// write-only).
    public static var xpubNoDrop: Self { .flag("xpubNoDrop", ZMQ_XPUB_NODROP) }
    /// XPUB: pass on every subscription message, not only the first for each prefix (`ZMQ_XPUB_VERBOSE`,
    /// write-only). Needed to count subscribers that share a prefix.
    public static var xpubVerbose: Self { .flag("xpubVerbose", ZMQ_XPUB_VERBOSE) }
    /// Act as the CURVE server: needs ``curveSecretKey``; clients must know its public key (`ZMQ_CURVE_SERVER`).
    public static var curveServer: Self { .flag("curveServer", ZMQ_CURVE_SERVER) }
}

extension SocketOption where Value == Bool? {
    /// Turn TCP keepalive on or off (`ZMQ_TCP_KEEPALIVE`); `nil` leaves the OS default.
    public static var tcpKeepalive: Self {
        .int32("tcpKeepalive", ZMQ_TCP_KEEPALIVE, encode: { $0.map { $0 ? 1 : 0 } ?? -1 },
               decode: { $0 < 0 ? nil : $0 != 0 })
    }
}

extension SocketOption where Value == Int? {
    /// The largest message, in bytes, the socket accepts from a peer (`ZMQ_MAXMSGSIZE`); `nil` (the default) is no
    /// limit. A peer that sends more is disconnected. Applies to `tcp://` and `ipc://`, not to `inproc://`.
    public static var maxMessageSize: Self {
        Self(name: "maxMessageSize", code: ZMQ_MAXMSGSIZE, representation: .int64,
             encode: { .int64(Int64($0 ?? -1)) },
             decode: { $0.int64 < 0 ? nil : Int(clamping: $0.int64) })
    }
}

extension SocketOption where Value == [UInt8] {
    /// The id this socket presents to a ROUTER it connects to (`ZMQ_ROUTING_ID`), 1 to 255 bytes, not starting
    /// with a zero byte. Set it before connecting.
    public static var routingID: Self {
        .bytes("routingID", ZMQ_ROUTING_ID, capacity: 255, encode: { $0 }, decode: { $0 })
    }
}

extension SocketOption where Value == String {
    /// The endpoint of the last bind or connect, with a wildcard port resolved (`ZMQ_LAST_ENDPOINT`, read-only).
    public static var lastEndpoint: Self { .text("lastEndpoint", ZMQ_LAST_ENDPOINT, capacity: 1024) }
    /// The ZAP domain sent to the authentication handler (`ZMQ_ZAP_DOMAIN`). Setting it on a server turns ZAP on
    /// even for the NULL mechanism.
    public static var zapDomain: Self { .text("zapDomain", ZMQ_ZAP_DOMAIN, capacity: 256) }
    /// This socket's long-term CURVE public key, 40 Z85 characters (`ZMQ_CURVE_PUBLICKEY`).
    public static var curvePublicKey: Self { .text("curvePublicKey", ZMQ_CURVE_PUBLICKEY, capacity: 41) }
    /// This socket's long-term CURVE secret key, 40 Z85 characters (`ZMQ_CURVE_SECRETKEY`).
    public static var curveSecretKey: Self { .text("curveSecretKey", ZMQ_CURVE_SECRETKEY, capacity: 41) }
    /// Client only: the server's CURVE public key, 40 Z85 characters (`ZMQ_CURVE_SERVERKEY`). Setting it makes
    /// the socket a CURVE client.
    public static var curveServerKey: Self { .text("curveServerKey", ZMQ_CURVE_SERVERKEY, capacity: 41) }
}

extension SocketOption where Value == PollEvents {
    /// What the socket is ready for right now (`ZMQ_EVENTS`, read-only).
    public static var events: Self {
        .int32("events", ZMQ_EVENTS, encode: { Int32($0.rawValue) },
               decode: { PollEvents(rawValue: Int16(truncatingIfNeeded: $0)) })
    }
}
