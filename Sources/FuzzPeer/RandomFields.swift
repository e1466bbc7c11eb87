import FluxBusProtocol

/// A visitor that fills every field it meets with random content, walking the codec's own layouts, so that it makes
/// a valid message of any command without per-type code: edge-biased integers, mostly-ASCII strings, short byte
/// fields and lists.
struct RandomFields: WireVisitor {
    typealias Failure = Never

    var rng: SplitMix64
    /// The most items a top-level list gets; nested lists get fewer.
    var maxItems = 3
    private var depth = 0

    init(rng: SplitMix64) {
        self.rng = rng
    }

    /// A random message of `command`.
    mutating func message(_ command: Command) -> Message {
        Message.make(command, by: &self)
    }

    private mutating func integer<T: FixedWidthInteger & UnsignedInteger>() -> T {
        switch rng.next() % 8 {
        case 0: 0
        case 1: .max
        case 2: T(truncatingIfNeeded: rng.next() % 256)
        default: T(truncatingIfNeeded: rng.next())
        }
    }

    mutating func text() -> String {
        let length = rng.below(13)
        var scalars = String.UnicodeScalarView()
        for _ in 0..<length {
            // Mostly printable ASCII; now and then 2-, 3- and 4-byte UTF-8.
            let range: ClosedRange<UInt32> =
                switch rng.next() % 8 {
                case 0: 0xA0...0x24F
                case 1: 0x4E00...0x9FFF
                case 2: 0x1F300...0x1F64F
                default: 0x21...0x7E
                }
            scalars.append(Unicode.Scalar(range.lowerBound + UInt32(rng.next() % UInt64(range.count)))!)
        }
        return String(scalars)
    }

    mutating func u16(_ value: inout UInt16, _ field: StaticString) { value = integer() }
    mutating func u32(_ value: inout UInt32, _ field: StaticString) { value = integer() }
    mutating func u64(_ value: inout UInt64, _ field: StaticString) { value = integer() }
    mutating func bool(_ value: inout Bool, _ field: StaticString) { value = rng.next() & 1 == 1 }
    mutating func string(_ value: inout String, _ field: StaticString) { value = text() }
    mutating func bytes(_ value: inout [UInt8], _ field: StaticString) { value = rng.bytes(rng.below(25)) }

    mutating func optionalString(_ value: inout String?, _ field: StaticString) {
        value = rng.next() & 1 == 1 ? text() : nil
    }

    mutating func optionalBytes(_ value: inout [UInt8]?, _ field: StaticString) {
        value = rng.next() & 1 == 1 ? rng.bytes(rng.below(25)) : nil
    }

    mutating func enumeration<T: WireEnum>(_ value: inout T, _ field: StaticString) {
        while true {
            if let random = T(rawValue: UInt8(truncatingIfNeeded: rng.next() & 7)) { return value = random }
        }
    }

    mutating func list<T: WireItem>(_ items: inout [T], _ field: StaticString) {
        let count = rng.below(max(0, maxItems - depth) + 1)
        depth += 1
        defer { depth -= 1 }
        items = (0..<count).map { _ in
            var item = T()
            item.visit(&self)
            return item
        }
    }
}
