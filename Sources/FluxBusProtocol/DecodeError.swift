/// Why a sequence of frames is not a valid FluxBus message.
///
/// The decoder is total: any input yields a ``Message`` or a `DecodeError`. A receiver drops
/// the message, counts it and logs ``description``; a malformed message is never fatal. The
/// one error with a protocol answer is ``Code-swift.struct/unsupportedVersion``: a coordinator
/// answers a HELLO spoken in another version with REJECT code 1 (see ``foundVersion``).
///
/// ```swift
/// do {
///     let message = try codec.decode(frames)
/// } catch where error.code == .unsupportedVersion {
///     reply(.reject(.init(code: .versionMismatch, reason: error.description)))
/// } catch {
///     malformed += 1
/// }
/// ```
public struct DecodeError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kind of failure. New codes may be added; switch over it with a `default`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case wrongFrameCount, badSignature, unsupportedVersion, frameTooLarge, unknownCommand
            case truncated, trailingBytes, invalidUTF8, lengthOverLimit, invalidBool, invalidStatus, badBundle, badRun
        }

        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// The message does not have exactly two frames; ``DecodeError/value`` is the count found.
        public static let wrongFrameCount = Code(.wrongFrameCount)
        /// Frame 0 is not `"FLXB"` followed by a version byte (or has extra bytes after it).
        public static let badSignature = Code(.badSignature)
        /// Frame 0 carries another protocol version; ``DecodeError/foundVersion`` holds it.
        public static let unsupportedVersion = Code(.unsupportedVersion)
        /// The body frame is larger than ``Limits/maxFrameBytes``.
        public static let frameTooLarge = Code(.frameTooLarge)
        /// The command byte names no command of this version; ``DecodeError/value`` is the byte.
        public static let unknownCommand = Code(.unknownCommand)
        /// A field (or a length it announces) runs past the end of the frame.
        public static let truncated = Code(.truncated)
        /// Bytes are left over after the last field; ``DecodeError/value`` counts them.
        public static let trailingBytes = Code(.trailingBytes)
        /// A `string` field is not valid UTF-8.
        public static let invalidUTF8 = Code(.invalidUTF8)
        /// A length or count is larger than the configured ``Limits``.
        public static let lengthOverLimit = Code(.lengthOverLimit)
        /// A `bool` (or an optional's presence byte) is neither 0 nor 1.
        public static let invalidBool = Code(.invalidBool)
        /// A status or worker-state byte is outside its table.
        public static let invalidStatus = Code(.invalidStatus)
        /// A BUNDLE that is empty, or holds another BUNDLE.
        public static let badBundle = Code(.badBundle)
        /// A run (ACTIONS, ACKS, COMPLETIONS) that is empty, whose counts and lengths disagree, that leaves a nonzero
        /// digest in its template, or whose sequences would pass the largest u64; ``DecodeError/field`` names the field.
        public static let badRun = Code(.badRun)

        /// The code's name, for example `truncated`.
        public var description: String { base.rawValue }
    }

    /// The kind of failure.
    public var code: Code
    /// The message being decoded, once its command byte was read.
    public var command: Command?
    /// The path of the field that failed, for example `stores[1].handles[0]`.
    public var field: String?
    /// The offending number: the frame count, version, command byte, bool or status byte,
    /// announced length, trailing byte count or frame size, depending on ``code``.
    public var value: Int?
    /// The bound that was crossed: the limit for `lengthOverLimit` and `frameTooLarge`, the
    /// bytes remaining for `truncated`.
    public var limit: Int?

    /// An error of the given kind; the decoder fills in the details it knows.
    public init(code: Code, command: Command? = nil, field: String? = nil, value: Int? = nil, limit: Int? = nil) {
        self.code = code
        self.command = command
        self.field = field
        self.value = value
        self.limit = limit
    }

    /// The version byte the peer sent, when ``code`` is `unsupportedVersion`.
    public var foundVersion: UInt8? {
        guard code == .unsupportedVersion, let value else { return nil }
        return UInt8(truncatingIfNeeded: value)
    }

    /// One line for the log: what failed, where, and with what value.
    public var description: String {
        let subject = [command.map { "\($0)" }, field].compactMap { $0 }.joined(separator: ".")
        let at = subject.isEmpty ? "" : " at \(subject)"
        let detail: String
        switch code {
        case .wrongFrameCount:
            detail = "expected \(Limits.maxMessageFrames) frames (signature, body), got \(value ?? 0)"
        case .badSignature:
            detail = "frame 0 is not the FluxBus signature \"FLXB\" plus one version byte"
        case .unsupportedVersion:
            detail = "peer speaks protocol version \(value ?? 0), this codec speaks \(Codec.version)"
        case .frameTooLarge:
            detail = "body frame of \(value ?? 0) bytes exceeds the limit of \(limit ?? 0)"
        case .unknownCommand:
            detail = "unknown command byte \(hex(value))"
        case .truncated:
            detail = "needs \(value ?? 0) bytes, only \(limit ?? 0) remain in the frame"
        case .trailingBytes:
            detail = "\(value ?? 0) bytes left over after the last field"
        case .invalidUTF8:
            detail = "string is not valid UTF-8"
        case .lengthOverLimit:
            detail = "length \(value ?? 0) exceeds the limit of \(limit ?? 0)"
        case .invalidBool:
            detail = "bool byte \(hex(value)) is neither 0x00 nor 0x01"
        case .invalidStatus:
            detail = "byte \(hex(value)) is not a defined value"
        case .badBundle:
            detail = value == 0 ? "a BUNDLE holds at least one message" : "a BUNDLE may not hold another BUNDLE"
        case .badRun:
            detail = limit.map { "\(value ?? 0) bytes where the run's count calls for \($0)" }
                ?? "a run holds at least one message, a digest 0 in its template, and sequences within u64"
        default:
            detail = "decoding failed"
        }
        return "FluxBus decode error (\(code))\(at): \(detail)"
    }

    private func hex(_ value: Int?) -> String {
        let digits = String(value ?? 0, radix: 16, uppercase: true)
        return "0x" + (digits.count < 2 ? "0" + digits : digits)
    }
}

extension DecodeError {
    static func truncated(_ field: StaticString, needed: Int, remaining: Int) -> DecodeError {
        DecodeError(code: .truncated, field: "\(field)", value: needed, limit: remaining)
    }

    static func overLimit(_ field: StaticString, length: Int, limit: Int) -> DecodeError {
        DecodeError(code: .lengthOverLimit, field: "\(field)", value: length, limit: limit)
    }

    /// This error, attributed to a message of `command`.
    func `in`(_ command: Command) -> DecodeError {
        var copy = self
        copy.command = command
        return copy
    }

    /// This error, re-addressed to item `index` of the list `list`.
    func nested(in list: StaticString, index: Int) -> DecodeError {
        var copy = self
        let inner = field.map { $0.isEmpty ? "" : ".\($0)" } ?? ""
        copy.field = "\(list)[\(index)]\(inner)"
        return copy
    }
}
