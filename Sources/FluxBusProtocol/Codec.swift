/// Encodes ``Message``s to the two FluxBus frames and decodes them back, strictly.
///
/// The codec is a pure function of its input: no sockets, no Foundation, no shared state.
/// Encoding measures the message first and writes the body frame into one buffer of exactly
/// the right size. Decoding is total: any frames yield a message or a ``DecodeError`` (never a
/// trap), and no length is trusted before it has been checked against the bytes remaining and
/// against ``limits``.
///
/// ```swift
/// let codec = Codec()
/// let frames = codec.encode(.goodbye(.init(reason: "shutting down")))
/// // frames[0] == Codec.signature, frames[1] == [0x0B, 0x00, 0x0D, …]
/// let message = try codec.decode(frames)   // .goodbye(…)
/// ```
public struct Codec: Sendable {
    /// The protocol version this codec speaks, the last byte of frame 0. Version 2 streams SNAPSHOT and STATE in
    /// chunks (PULL, CHUNK) and gives them `size` and `checksum`; version 3 marks the REPLAY that ends a FETCH's answer; version 4 reports handler crashes in HELLO and
    /// carries poisoned actions in REPLAY and STATUS; version 5
    /// reports in STATUS the history a store new to the bus replayed; version 6 says in each ACK result what the store
    /// read of its dependencies (``StoreResult/readDigest``); version 7 says in HELLO the epoch the worker's applied
    /// sequence came from (``Message/Hello/appliedEpoch``); version 8 sends alike ACTIONs, ACKs and COMPLETEDs of
    /// consecutive sequences as one run (``Message/Actions``, ``Message/Acks``, ``Message/Completions``).
    public static let version: UInt8 = 8

    /// ASCII `FLXB`, the start of frame 0 in every version: a subscriber to it also receives what a publisher of
    /// another version sends, and can say so rather than hear nothing.
    public static let magic: [UInt8] = [0x46, 0x4C, 0x58, 0x42]

    /// Frame 0 of every message: ``magic`` then ``version``. Also a worker's SUB subscription prefix.
    public static let signature: [UInt8] = magic + [version]

    /// The bounds decoding enforces (and ``validate(_:)`` checks before sending).
    public var limits: Limits

    /// A codec that enforces `limits`.
    public init(limits: Limits = .default) {
        self.limits = limits
    }

    // MARK: Encoding

    /// The two frames of `message`: ``signature``, then the command byte and the body.
    ///
    /// A string longer than 65535 UTF-8 bytes, a list longer than 65535 items or a byte field
    /// longer than 4 GiB cannot be expressed on the wire: encoding one is a programming error
    /// and traps, naming the field. To stay within what peers accept, check ``validate(_:)``.
    public func encode(_ message: consuming Message) -> [[UInt8]] {
        [Self.signature, encodeBody(message)]
    }

    /// Frame 1 of `message` alone: its command byte and body, as a BUNDLE carries it.
    public func encodeBody(_ message: consuming Message) -> [UInt8] {
        let command = message.command
        var encoder = FrameEncoder(command: command)
        do { try message.handBody(to: &encoder) } catch {
            preconditionFailure("FluxBus cannot encode this message: \(error.in(command))")
        }
        return encoder.frame
    }

    /// Checks, without encoding, that a receiver with this codec's ``limits`` would accept
    /// `message`.
    ///
    /// - Throws: the `lengthOverLimit` or `frameTooLarge` error the receiver's decoder would
    ///   report, naming the field.
    public func validate(_ message: Message) throws(DecodeError) {
        let size = 1 + (try Self.measure(message, limits: limits))
        guard size <= limits.maxFrameBytes else {
            throw DecodeError(code: .frameTooLarge, command: message.command, value: size, limit: limits.maxFrameBytes)
        }
    }

    /// The body's encoded size after the command byte, checked against `limits`.
    private static func measure(_ message: Message, limits: Limits) throws(DecodeError) -> Int {
        var sizer = WireSizer(limits: limits)
        do { try message.visitBody(&sizer) } catch { throw error.in(message.command) }
        return sizer.count
    }

    // MARK: Decoding

    /// Decodes the frames of one message.
    ///
    /// - Parameter frames: every frame received, without the ROUTER's routing-id frame.
    /// - Throws: ``DecodeError`` naming what failed and where.
    public func decode(_ frames: [[UInt8]]) throws(DecodeError) -> Message {
        guard frames.count == Limits.maxMessageFrames else {
            throw DecodeError(code: .wrongFrameCount, value: frames.count)
        }
        try Self.checkSignature(frames[0])
        return try frames[1].withUnsafeBufferPointer { (body) throws(DecodeError) -> Message in
            try decodeBody(body)
        }
    }

    /// Decodes the frames of one message in place, for transports that own the frames'
    /// memory (for example, `zmq_msg_data`); nothing is copied except the decoded fields.
    ///
    /// - Parameter frames: views of every frame received, without the routing-id frame. Each
    ///   must stay valid for the duration of the call.
    /// - Throws: ``DecodeError`` naming what failed and where.
    public func decode(_ frames: some Collection<UnsafeRawBufferPointer>) throws(DecodeError) -> Message {
        guard frames.count == Limits.maxMessageFrames, let first = frames.first, let last = frames.dropFirst().first else {
            throw DecodeError(code: .wrongFrameCount, value: frames.count)
        }
        try Self.checkSignature(first)
        return try last.withMemoryRebound(to: UInt8.self) { (body) throws(DecodeError) -> Message in
            try decodeBody(body)
        }
    }

    /// Checks frame 0. A frame that starts with `FLXB` and another version byte is a version
    /// mismatch whatever follows, so later versions may lengthen frame 0.
    private static func checkSignature(_ frame: some Collection<UInt8>) throws(DecodeError) {
        guard frame.count >= signature.count, frame.starts(with: magic) else {
            throw DecodeError(code: .badSignature, value: frame.count)
        }
        let found = frame.dropFirst(magic.count).first ?? 0
        guard found == version else { throw DecodeError(code: .unsupportedVersion, value: Int(found)) }
        guard frame.count == signature.count else { throw DecodeError(code: .badSignature, value: frame.count) }
    }

    /// Decodes a body frame: the command byte, then its fields.
    func decodeBody(_ body: UnsafeBufferPointer<UInt8>) throws(DecodeError) -> Message {
        guard let byte = body.first else { throw .truncated("command", needed: 1, remaining: 0) }
        guard let command = Command(rawValue: byte) else { throw DecodeError(code: .unknownCommand, value: Int(byte)) }
        guard body.count <= limits.maxFrameBytes else {
            throw DecodeError(code: .frameTooLarge, command: command, value: body.count, limit: limits.maxFrameBytes)
        }
        var reader = WireReader(UnsafeBufferPointer(rebasing: body.dropFirst()), limits: limits)
        do {
            let message = try Message.make(command, by: &reader)
            try reader.finish()
            return message
        } catch {
            throw error.in(command)
        }
    }
}

/// Sizes a body, then writes it into a frame of exactly that size, both on the body in place.
private struct FrameEncoder: BodyHandler {
    let command: Command
    private(set) var frame: [UInt8] = []

    init(command: Command) { self.command = command }

    mutating func handle<T: WireItem>(_ body: inout T) throws(DecodeError) {
        var sizer = WireSizer(limits: .representable)
        try body.visit(&sizer)
        var writer = WireWriter(capacity: 1 + sizer.count)
        writer.integer(command.rawValue)
        body.visit(&writer)
        frame = writer.bytes
    }
}
