import FluxBusProtocol

/// Describes a layout as `(field, type)` rows in the words `docs/PROTOCOL.md` uses, by walking
/// the codec's own `visit(_:)` of an empty value; list item types are described as records.
struct WireSchema: WireVisitor {
    typealias Failure = Never

    struct Row: Hashable, CustomStringConvertible {
        var field: String
        var type: String
        var description: String { "\(field): \(type)" }
    }

    private(set) var rows: [Row] = []
    /// Every record type reachable from the visited layout, by name.
    private(set) var records: [String: [Row]] = [:]

    /// The layout of `command`'s body.
    static func of(_ command: Command) -> WireSchema {
        var schema = WireSchema()
        _ = Message.make(command, by: &schema)
        return schema
    }

    /// The protocol's name for a one-byte table type.
    static func typeName<T: WireEnum>(of type: T.Type) -> String {
        type == WorkerState.self ? "worker-state" : "status"
    }

    private mutating func add(_ field: StaticString, _ type: String) {
        rows.append(Row(field: "\(field)", type: type))
    }

    mutating func u16(_ value: inout UInt16, _ field: StaticString) { add(field, "u16") }
    mutating func u32(_ value: inout UInt32, _ field: StaticString) { add(field, "u32") }
    mutating func u64(_ value: inout UInt64, _ field: StaticString) { add(field, "u64") }
    mutating func bool(_ value: inout Bool, _ field: StaticString) { add(field, "bool") }
    mutating func string(_ value: inout String, _ field: StaticString) { add(field, "string") }
    mutating func bytes(_ value: inout [UInt8], _ field: StaticString) { add(field, "bytes") }
    mutating func optionalString(_ value: inout String?, _ field: StaticString) { add(field, "optional string") }
    mutating func optionalBytes(_ value: inout [UInt8]?, _ field: StaticString) { add(field, "optional bytes") }
    mutating func enumeration<T: WireEnum>(_ value: inout T, _ field: StaticString) { add(field, Self.typeName(of: T.self)) }

    mutating func list<T: WireItem>(_ items: inout [T], _ field: StaticString) {
        guard T.self != String.self else { return add(field, "list of string") }
        let name = "\(T.self)"
        add(field, "list of \(name)")
        var item = WireSchema()
        var empty = T()
        empty.visit(&item)
        records[name] = item.rows
        records.merge(item.records) { first, _ in first }
    }
}
