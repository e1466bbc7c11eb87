import FluxBusProtocol

/// Encodes a message through the codec's own `WireWriter` and records where its length prefixes and counts sit, so
/// that the fuzzer can overwrite them with purpose (huge, one too many, zero).
struct LengthPrefixes: WireVisitor {
    typealias Failure = Never

    private(set) var writer = WireWriter(capacity: 128)
    /// Byte ranges of the body frame (command byte included) that hold a `u16` or `u32` length or count.
    private(set) var ranges: [Range<Int>] = []

    /// The body frame of `message` and its length prefixes.
    static func locate(in message: Message) -> (body: [UInt8], prefixes: [Range<Int>]) {
        var locator = LengthPrefixes()
        locator.writer.integer(message.command.rawValue)
        message.visitBody(&locator)
        return (locator.writer.bytes, locator.ranges)
    }

    private mutating func prefixed(_ width: Int, _ write: (inout WireWriter) -> Void) {
        let start = writer.count
        write(&writer)
        ranges.append(start..<start + width)
    }

    mutating func u16(_ value: inout UInt16, _ field: StaticString) { writer.u16(&value, field) }
    mutating func u32(_ value: inout UInt32, _ field: StaticString) { writer.u32(&value, field) }
    mutating func u64(_ value: inout UInt64, _ field: StaticString) { writer.u64(&value, field) }
    mutating func bool(_ value: inout Bool, _ field: StaticString) { writer.bool(&value, field) }
    mutating func string(_ value: inout String, _ field: StaticString) { prefixed(2) { $0.string(&value, field) } }
    mutating func bytes(_ value: inout [UInt8], _ field: StaticString) { prefixed(4) { $0.bytes(&value, field) } }
    mutating func enumeration<T: WireEnum>(_ value: inout T, _ field: StaticString) { writer.enumeration(&value, field) }

    mutating func list<T: WireItem>(_ items: inout [T], _ field: StaticString) {
        prefixed(2) { $0.integer(UInt16(truncatingIfNeeded: items.count)) }
        for index in items.indices {
            var item = items[index]
            item.visit(&self)
        }
    }
}
