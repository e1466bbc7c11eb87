/// Appends fields to a body frame, big-endian, into one buffer reserved up front.
///
/// The writer trusts its input: ``WireSizer`` has already measured the message and checked
/// that every length fits its length prefix.
package struct WireWriter: WireVisitor {
    package typealias Failure = Never

    package private(set) var bytes: [UInt8] = []

    package init(capacity: Int) {
        bytes.reserveCapacity(capacity)
    }

    package mutating func integer<T: FixedWidthInteger>(_ value: T) {
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }

    package mutating func u16(_ value: inout UInt16, _ field: StaticString) { integer(value) }
    package mutating func u32(_ value: inout UInt32, _ field: StaticString) { integer(value) }
    package mutating func u64(_ value: inout UInt64, _ field: StaticString) { integer(value) }
    package mutating func bool(_ value: inout Bool, _ field: StaticString) { bytes.append(value ? 1 : 0) }

    package mutating func string(_ value: inout String, _ field: StaticString) {
        integer(UInt16(truncatingIfNeeded: value.utf8.count))
        bytes.append(contentsOf: value.utf8)
    }

    package mutating func bytes(_ value: inout [UInt8], _ field: StaticString) {
        integer(UInt32(truncatingIfNeeded: value.count))
        bytes.append(contentsOf: value)
    }

    package mutating func enumeration<T: WireEnum>(_ value: inout T, _ field: StaticString) {
        bytes.append(value.rawValue)
    }

    package mutating func list<T: WireItem>(_ items: inout [T], _ field: StaticString) {
        integer(UInt16(truncatingIfNeeded: items.count))
        for var item in items { item.visit(&self) }
    }
}

/// Measures an encoding without producing it, and checks every length against limits.
///
/// The encoder runs it with ``Limits/representable`` to size its buffer and to refuse what the
/// length prefixes cannot express; ``Codec/validate(_:)`` runs it with the codec's own limits.
struct WireSizer: WireVisitor {
    typealias Failure = DecodeError

    let limits: Limits
    private(set) var count = 0

    init(limits: Limits) {
        self.limits = limits
    }

    private mutating func length(_ length: Int, prefix: Int, limit: Int, _ field: StaticString) throws(DecodeError) {
        guard length <= limit else { throw .overLimit(field, length: length, limit: limit) }
        count += prefix + length
    }

    mutating func u16(_ value: inout UInt16, _ field: StaticString) { count += 2 }
    mutating func u32(_ value: inout UInt32, _ field: StaticString) { count += 4 }
    mutating func u64(_ value: inout UInt64, _ field: StaticString) { count += 8 }
    mutating func bool(_ value: inout Bool, _ field: StaticString) { count += 1 }
    mutating func enumeration<T: WireEnum>(_ value: inout T, _ field: StaticString) { count += 1 }

    mutating func string(_ value: inout String, _ field: StaticString) throws(DecodeError) {
        try length(value.utf8.count, prefix: 2, limit: limits.maxStringBytes, field)
    }

    mutating func bytes(_ value: inout [UInt8], _ field: StaticString) throws(DecodeError) {
        try length(value.count, prefix: 4, limit: limits.maxBytesField, field)
    }

    mutating func list<T: WireItem>(_ items: inout [T], _ field: StaticString) throws(DecodeError) {
        guard items.count <= limits.maxListCount else {
            throw .overLimit(field, length: items.count, limit: limits.maxListCount)
        }
        count += 2
        for (index, var item) in items.enumerated() {
            do { try item.visit(&self) } catch { throw error.nested(in: field, index: index) }
        }
    }
}
