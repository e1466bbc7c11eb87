/// Appends fields to a body frame, big-endian, into one buffer reserved up front.
///
/// The writer trusts its input: ``WireSizer`` has already measured the message and checked
/// that every length fits its length prefix.
package struct WireWriter: WireVisitor {
    package typealias Failure = Never

    /// The frame so far is `storage[..<count]`; the rest is room reserved ahead. Fields are stored through a pointer
    /// into that room: appending each integer to an array took a generic call of about a hundred instructions.
    private var storage: [UInt8]
    /// How many bytes have been written.
    package private(set) var count = 0

    package init(capacity: Int) {
        storage = Self.zeroed(capacity)
    }

    /// `count` zero bytes. `[UInt8](repeating:count:)` allocates through a generic entry point of the standard library
    /// that looks up the storage's type metadata at every call; copying from a buffer is specialized here, and costs
    /// about half as many instructions for a frame's size (some 450 against 850 for 200 bytes).
    private static func zeroed(_ count: Int) -> [UInt8] {
        guard count <= zeroPage.count else { return [UInt8](repeating: 0, count: count) }
        return zeroPage.withUnsafeBytes { [UInt8](UnsafeRawBufferPointer(rebasing: $0[..<count])) }
    }
    private static let zeroPage = [UInt8](repeating: 0, count: 4096)

    /// The bytes written. The codec reserves exactly what ``WireSizer`` measured, so its frame is not copied.
    package var bytes: [UInt8] { count == storage.count ? storage : Array(storage[..<count]) }

    /// Makes room for `extra` more bytes: only tools that guess their capacity ever need it.
    private mutating func reserve(_ extra: Int) {
        guard count + extra > storage.count else { return }
        storage.append(contentsOf: repeatElement(0, count: max(extra, storage.count)))
    }

    package mutating func integer<T: FixedWidthInteger>(_ value: T) {
        reserve(MemoryLayout<T>.size)
        let offset = count
        storage.withUnsafeMutableBytes { $0.storeBytes(of: value.bigEndian, toByteOffset: offset, as: T.self) }
        count += MemoryLayout<T>.size
    }

    private mutating func raw(_ source: UnsafeRawBufferPointer) {
        guard !source.isEmpty else { return }
        reserve(source.count)
        let offset = count
        storage.withUnsafeMutableBytes { UnsafeMutableRawBufferPointer(rebasing: $0[offset...]).copyMemory(from: source) }
        count += source.count
    }

    package mutating func u16(_ value: inout UInt16, _ field: StaticString) { integer(value) }
    package mutating func u32(_ value: inout UInt32, _ field: StaticString) { integer(value) }
    package mutating func u64(_ value: inout UInt64, _ field: StaticString) { integer(value) }
    package mutating func bool(_ value: inout Bool, _ field: StaticString) { integer(value ? 1 : 0 as UInt8) }

    package mutating func string(_ value: inout String, _ field: StaticString) {
        integer(UInt16(truncatingIfNeeded: value.utf8.count))
        if !value.isEmpty { value.withUTF8 { raw(UnsafeRawBufferPointer($0)) } }
    }

    package mutating func bytes(_ value: inout [UInt8], _ field: StaticString) {
        integer(UInt32(truncatingIfNeeded: value.count))
        value.withUnsafeBytes { raw($0) }
    }

    package mutating func enumeration<T: WireEnum>(_ value: inout T, _ field: StaticString) {
        integer(value.rawValue)
    }

    package mutating func list<T: WireItem>(_ items: inout [T], _ field: StaticString) {
        integer(UInt16(truncatingIfNeeded: items.count))
        for var item in items { item.visit(&self) }
    }

    package mutating func entries(_ entries: inout [ReplayEntry], encoded: EncodedEntries?, _ field: StaticString) {
        guard let encoded else { return list(&entries, field) }
        integer(UInt16(truncatingIfNeeded: encoded.count))
        encoded.bytes.withUnsafeBytes { raw($0) }
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

    /// Entries already encoded were checked field by field when they were (``EntrySplicer``); their count is checked here.
    mutating func entries(_ entries: inout [ReplayEntry], encoded: EncodedEntries?, _ field: StaticString) throws(DecodeError) {
        guard let encoded else { return try list(&entries, field) }
        guard encoded.count <= limits.maxListCount else {
            throw .overLimit(field, length: encoded.count, limit: limits.maxListCount)
        }
        count += 2 + encoded.bytes.count
    }
}
