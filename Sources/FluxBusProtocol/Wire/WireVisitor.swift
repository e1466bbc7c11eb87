/// Walks the fields of a wire structure in order, reading them, writing them or measuring them.
///
/// Each message body and list item describes its layout exactly once, in `visit(_:)`, as a
/// sequence of calls on a visitor. The reader fills the fields in, the writer emits them, the
/// sizer counts and bounds them: the encoder and the decoder cannot disagree about a layout.
/// `field` names the field for error messages; it costs nothing unless something fails.
package protocol WireVisitor {
    /// What visiting can fail with: `DecodeError` for the reader and the sizer, `Never` for the writer.
    associatedtype Failure: Error

    mutating func u16(_ value: inout UInt16, _ field: StaticString) throws(Failure)
    mutating func u32(_ value: inout UInt32, _ field: StaticString) throws(Failure)
    mutating func u64(_ value: inout UInt64, _ field: StaticString) throws(Failure)
    /// One byte, 0 or 1.
    mutating func bool(_ value: inout Bool, _ field: StaticString) throws(Failure)
    /// A u16 byte length, then that many bytes of UTF-8.
    mutating func string(_ value: inout String, _ field: StaticString) throws(Failure)
    /// A u32 byte length, then that many opaque bytes.
    mutating func bytes(_ value: inout [UInt8], _ field: StaticString) throws(Failure)
    /// A presence byte (0 absent, 1 present), then the string when present.
    mutating func optionalString(_ value: inout String?, _ field: StaticString) throws(Failure)
    /// A presence byte (0 absent, 1 present), then the bytes when present.
    mutating func optionalBytes(_ value: inout [UInt8]?, _ field: StaticString) throws(Failure)
    /// One byte from a closed table, such as a status.
    mutating func enumeration<T: WireEnum>(_ value: inout T, _ field: StaticString) throws(Failure)
    /// A u16 item count, then the items.
    mutating func list<T: WireItem>(_ items: inout [T], _ field: StaticString) throws(Failure)
    /// A plan, as a ``list(_:_:)``, where consecutive items of an enclosing list usually carry the same one (a
    /// REPLAY's entries): a reader may hand back the plan it read last when the bytes are the same.
    mutating func repeatingList(_ steps: inout [PlanStep], _ field: StaticString) throws(Failure)
    /// Recorded outputs, as a ``list(_:_:)``, likewise.
    mutating func repeatingList(_ outputs: inout [StoreOutput], _ field: StaticString) throws(Failure)
    /// A REPLAY's entries, as a ``list(_:_:)``. When `encoded` is given it holds them in wire layout and `entries` is
    /// empty: the writer and the sizer take those bytes as they are, and any other visitor is handed them decoded.
    mutating func entries(_ entries: inout [ReplayEntry], encoded: EncodedEntries?, _ field: StaticString) throws(Failure)
}

extension WireVisitor {
    package mutating func entries(_ entries: inout [ReplayEntry], encoded: EncodedEntries?, _ field: StaticString) throws(Failure) {
        if let encoded { entries = encoded.decoded() }
        try list(&entries, field)
    }

    package mutating func repeatingList(_ steps: inout [PlanStep], _ field: StaticString) throws(Failure) {
        try list(&steps, field)
    }

    package mutating func repeatingList(_ outputs: inout [StoreOutput], _ field: StaticString) throws(Failure) {
        try list(&outputs, field)
    }

    package mutating func optionalString(_ value: inout String?, _ field: StaticString) throws(Failure) {
        var present = value != nil
        try bool(&present, field)
        guard present else { return value = nil }
        var string = value ?? ""
        try self.string(&string, field)
        value = string
    }

    package mutating func optionalBytes(_ value: inout [UInt8]?, _ field: StaticString) throws(Failure) {
        var present = value != nil
        try bool(&present, field)
        guard present else { return value = nil }
        var bytes = value ?? []
        try self.bytes(&bytes, field)
        value = bytes
    }
}

/// A structure with a wire layout: a message body, a list item, or a plain string in a list.
package protocol WireItem: Sendable, Hashable {
    /// The empty value: empty strings and lists, zero numbers, absent optionals. The decoder
    /// starts from it, and its encoding is the smallest any value of the type can have.
    init()
    /// Visits every field in wire order.
    mutating func visit<V: WireVisitor>(_ visitor: inout V) throws(V.Failure)
}

extension WireItem {
    /// The fewest bytes an encoded value occupies: the size of the empty value.
    /// The decoder checks a list's count against it before it allocates the list.
    static var minimumWireSize: Int {
        var sizer = WireSizer(limits: .representable)
        var empty = Self()
        do { try empty.visit(&sizer) } catch { preconditionFailure("the empty \(Self.self) must be encodable") }
        return sizer.count
    }
}

/// A one-byte value from a closed table; any other byte is `invalidStatus`.
package protocol WireEnum: RawRepresentable, Sendable where RawValue == UInt8 {}

extension String: WireItem {
    package mutating func visit<V: WireVisitor>(_ visitor: inout V) throws(V.Failure) {
        try visitor.string(&self, "")
    }
}
