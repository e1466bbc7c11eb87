import FluxBusProtocol
import Foundation

/// A message's fields as data, in wire order, named as `docs/PROTOCOL.md`'s tables name them: what the conformance
/// vectors of `docs/vectors/messages.json` hold beside each message's bytes. u64 values are decimal strings, so that
/// any JSON reader keeps them exact; bytes are lowercase hex; a status or code is its byte.
indirect enum WireField: Equatable {
    case object([(name: String, value: WireField)])
    case array([WireField])
    case string(String)
    case number(UInt32)
    case bool(Bool)
    case null

    static func == (lhs: WireField, rhs: WireField) -> Bool { lhs.json == rhs.json }

    /// The fields of `message`'s body.
    static func of(_ message: Message) -> WireField {
        var visitor = Visitor()
        message.visitBody(&visitor)
        return .object(visitor.fields)
    }

    /// Compact JSON with the fields in wire order.
    var json: String {
        switch self {
        case .object(let fields): "{" + fields.map { "\(Self.quote($0.name)):\($0.value.json)" }.joined(separator: ",") + "}"
        case .array(let items): "[" + items.map(\.json).joined(separator: ",") + "]"
        case .string(let text): Self.quote(text)
        case .number(let value): "\(value)"
        case .bool(let value): value ? "true" : "false"
        case .null: "null"
        }
    }

    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    private static func quote(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    /// Records each field it is walked through; a list item that is a bare string records itself unnamed.
    private struct Visitor: WireVisitor {
        typealias Failure = Never
        var fields: [(name: String, value: WireField)] = []

        private mutating func add(_ field: StaticString, _ value: WireField) { fields.append(("\(field)", value)) }

        mutating func u16(_ value: inout UInt16, _ field: StaticString) { add(field, .number(UInt32(value))) }
        mutating func u32(_ value: inout UInt32, _ field: StaticString) { add(field, .number(value)) }
        mutating func u64(_ value: inout UInt64, _ field: StaticString) { add(field, .string("\(value)")) }
        mutating func bool(_ value: inout Bool, _ field: StaticString) { add(field, .bool(value)) }
        mutating func string(_ value: inout String, _ field: StaticString) { add(field, .string(value)) }
        mutating func bytes(_ value: inout [UInt8], _ field: StaticString) { add(field, .string(WireField.hex(value))) }
        mutating func optionalString(_ value: inout String?, _ field: StaticString) { add(field, value.map { .string($0) } ?? .null) }
        mutating func optionalBytes(_ value: inout [UInt8]?, _ field: StaticString) {
            add(field, value.map { .string(WireField.hex($0)) } ?? .null)
        }
        mutating func enumeration<T: WireEnum>(_ value: inout T, _ field: StaticString) { add(field, .number(UInt32(value.rawValue))) }
        mutating func list<T: WireItem>(_ items: inout [T], _ field: StaticString) {
            add(field, .array(items.map { item in
                var item = item
                var inner = Visitor()
                item.visit(&inner)
                if inner.fields.count == 1, inner.fields[0].name.isEmpty { return inner.fields[0].value }
                return .object(inner.fields)
            }))
        }
    }
}
