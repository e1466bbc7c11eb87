import Foundation

/// An action whose payload type has been erased, so that one queue or one wire can carry every kind.
///
/// In process the payload stays the typed value; off the wire it is JSON bytes that a handler decodes into its
/// payload type. A handler sees the same ``Action`` either way.
public struct AnyAction: Sendable {
    /// The action's name.
    public let name: String
    /// The error the action carries, if any.
    public let error: ActionError?
    let payload: Value

    /// Erases a typed action.
    public init<Payload>(_ action: Action<Payload>) {
        self.name = action.name
        self.error = action.error
        self.payload = .value(action.payload)
    }

    /// An action received as JSON bytes, as a worker gets it from the bus.
    public init(name: String, json: [UInt8], error: ActionError? = nil) {
        self.name = name
        self.error = error
        self.payload = .encoded(json)
    }

    /// The payload as a given type: the value itself in process, or decoded from JSON.
    /// - Throws: ``StoreError`` with code `payloadType` when the payload does not fit the type.
    public func payload<Payload: Decodable>(as type: Payload.Type = Payload.self) throws -> Payload {
        try payload(as: type, reading: JSONCoding.reader(for: type))
    }

    /// The payload as `type`, its JSON read by `read`: a handler table chooses the reader once, when the handler is
    /// added, instead of once per action.
    @usableFromInline
    func payload<Payload: Decodable>(as type: Payload.Type, reading read: JSONCoding.Reader<Payload>) throws -> Payload {
        do {
            return try payload.decode(as: type, reading: read)
        } catch {
            throw StoreError(
                code: .payloadType,
                message: "the payload of action `\(name)` is not a valid \(Payload.self): \(error)"
            )
        }
    }

    /// The payload as JSON bytes, ready for the wire.
    /// - Throws: an `EncodingError` when the payload cannot be encoded.
    public func encodedPayload() throws -> [UInt8] {
        try payload.encoded()
    }
}

/// A value that is either still typed (in process) or JSON bytes (from another process). Payloads and store
/// outputs both travel this way, so a store reads them the same way wherever it runs.
package enum Value: @unchecked Sendable {
    // `@unchecked`: `.value` only ever holds `Sendable & Codable` payloads and outputs (see the initialisers that
    // build it), but the existential is spelled without `Encodable` to keep casts cheap.
    case value(any Sendable)
    case encoded([UInt8])

    package func decode<T: Decodable>(as type: T.Type) throws -> T {
        switch self {
        case .value(let value): try Self.cast(value, as: T.self)
        case .encoded(let bytes): try JSONCoding.decode(T.self, from: bytes)
        }
    }

    /// The value as `T`, its JSON (when it is bytes) read by `read`, a reader of `T` chosen beforehand.
    package func decode<T: Decodable>(as type: T.Type, reading read: JSONCoding.Reader<T>) throws -> T {
        switch self {
        case .value(let value): try Self.cast(value, as: T.self)
        case .encoded(let bytes): try read.decode(bytes)
        }
    }

    /// A typed value as `T`. Apart, so that decoding bytes, a worker's every action, does not fetch the metadata of
    /// `Optional<T>` this cast needs (about 330 instructions).
    @inline(never)
    private static func cast<T: Decodable>(_ value: any Sendable, as type: T.Type) throws -> T {
        if let typed = value as? T { return typed }
        // A different type of the same shape: go through JSON, exactly as a remote reader would.
        return try JSONCoding.decode(T.self, from: try Value.value(value).encoded())
    }

    package func encoded() throws -> [UInt8] {
        switch self {
        case .encoded(let bytes):
            return bytes
        case .value(let value):
            guard let encodable = value as? any Encodable else {
                throw StoreError(code: .payloadType, message: "\(type(of: value)) is not Encodable")
            }
            return try JSONCoding.encode(encodable)
        }
    }
}

/// The project's one JSON setting: sorted keys, so that equal states give equal bytes and equal digests.
@usableFromInline
package enum JSONCoding {
    // One of each, shared: making a coder costs more than a small payload's whole decode. Both are Sendable, and
    // their options never change after this.
    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()
    private static let decoder = JSONDecoder()

    package static func encode(_ value: any Encodable) throws -> [UInt8] {
        if let writable = value as? any JSONWritable {
            var bytes: [UInt8] = []
            writable.writeJSON(into: &bytes)
            return bytes
        }
        return Array(try encoder.encode(value))
    }

    package static func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
        try reader(for: type).decode(bytes)
    }

    /// How JSON becomes a `T`: its own reader when it is ``JSONReadable``, otherwise `JSONDecoder`. Asking which is a
    /// conformance lookup at run time, a few hundred instructions: a handler table asks once per handler.
    // `@unchecked`: it holds only a metatype, which never changes.
    @usableFromInline
    package struct Reader<T: Decodable>: @unchecked Sendable {
        /// `T` itself, when it reads its own JSON.
        let readable: (any JSONReadable.Type)?

        func decode(_ bytes: [UInt8]) throws -> T {
            guard let readable else { return try decoder.decode(T.self, from: Data(bytes)) }
            return try read(readable, from: bytes, as: T.self)
        }
    }

    @usableFromInline
    package static func reader<T: Decodable>(for type: T.Type) -> Reader<T> {
        Reader(readable: T.self as? any JSONReadable.Type)
    }

    /// `R(json:)` as the `T` it is. Opened on the concrete type, the value is never boxed in an existential: boxing
    /// it, then casting it back, took an allocation and a dynamic cast per payload.
    private static func read<R: JSONReadable, T>(_ readable: R.Type, from bytes: [UInt8], as type: T.Type) throws -> T {
        let value = try R(json: bytes)
        // R is T (found by casting T.self), so this cast only confirms that.
        return value as! T
    }

    /// `JSONDecoder` alone, for a ``JSONReadable`` whose own reader declines an input and leaves it the verdict.
    package static func decodeWithFoundation<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
        try decoder.decode(T.self, from: Data(bytes))
    }
}
