import Flux

/// Any JSON value, for stores whose state holds data of no fixed shape, such as the ``KVStore``. Numbers are kept
/// exactly (``JSONNumber``), never rounded to a double.
public enum JSONValue: Codable, Hashable, Sendable {
    case null
    case bool(Bool)
    case number(JSONNumber)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// `JSONDecoder` hands over numbers as Swift types, not as text: an integer comes exactly from `Int64` or
    /// `UInt64`, any other number from `Double`, rounded. The bus never decodes a ``JSONValue`` this way; it uses
    /// ``init(json:)``, which keeps every number exactly.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .number(JSONNumber(value))
        } else if let value = try? container.decode(UInt64.self) {
            self = .number(JSONNumber(value))
        } else if let value = try? container.decode(Double.self) {
            self = .number(JSONNumber(value))
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    /// Writes numbers as `Int64`, `UInt64` or `Double`, whichever holds them exactly.
    /// - Throws: `EncodingError.invalidValue` for a number none of them holds exactly, such as
    ///   `123456789012345678901234567890`, rather than rounding it; ``writeJSON(into:)`` writes every number.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .number(let value):
            if let integer = value.int64 {
                try container.encode(integer)
            } else if let integer = UInt64(value.description) {
                try container.encode(integer)
            } else if JSONNumber(value.double) == value {
                try container.encode(value.double)
            } else {
                throw EncodingError.invalidValue(value, EncodingError.Context(
                    codingPath: encoder.codingPath,
                    debugDescription: "the number \(value) has more digits than a double holds; "
                        + "an Encoder would round it, so encode the value with writeJSON(into:)"))
            }
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}

extension JSONValue: JSONWritable, JSONReadable {
    public func writeJSON(into bytes: inout [UInt8]) { CanonicalJSON.write(self, into: &bytes) }

    public init(json bytes: [UInt8]) throws { self = try JSONParser.parse(bytes) }

    /// Reads a new payload before it is sent: as ``init(json:)``, but a key given twice in an object is refused
    /// instead of keeping its first value, since the sender may have meant either.
    package init(newPayload bytes: [UInt8]) throws { self = try JSONParser.parse(bytes, refusingDuplicateKeys: true) }

    /// The members of an object, for payloads read without `JSONDecoder`.
    /// - Throws: when the value is not an object.
    func members(of what: String) throws -> [String: JSONValue] {
        guard case .object(let members) = self else { throw PayloadShapeError("\(what) must be a JSON object") }
        return members
    }
}

/// A payload of valid JSON but the wrong shape, read without `JSONDecoder`.
struct PayloadShapeError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
