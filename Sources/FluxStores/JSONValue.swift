import Flux

/// Any JSON value, for stores whose state holds data of no fixed shape, such as the ``KVStore``.
public enum JSONValue: Codable, Hashable, Sendable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}

extension JSONValue: JSONWritable, JSONReadable {
    public func writeJSON(into bytes: inout [UInt8]) { CanonicalJSON.write(self, into: &bytes) }

    public init(json bytes: [UInt8]) throws { self = try JSONParser.parse(bytes) }

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
