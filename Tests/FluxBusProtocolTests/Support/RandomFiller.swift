import FluxBusProtocol

/// A visitor that fills every field it meets with random content: edge-biased integers,
/// strings mixing ASCII, Latin, Greek, CJK and emoji, random bytes, short lists.
///
/// Because it walks the same `visit(_:)` layouts the codec uses, it generates every message
/// and record type without a line of per-type code.
struct RandomFiller<R: RandomNumberGenerator>: WireVisitor {
    typealias Failure = Never

    var rng: R
    /// The most items a top-level list gets; nested lists get fewer.
    var maxItems = 3
    private var depth = 0

    init(rng: R, maxItems: Int = 3) {
        self.rng = rng
        self.maxItems = maxItems
    }

    /// A random message of a random command.
    mutating func message() -> Message {
        message(Command.allCases.randomElement(using: &rng)!)
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
        default: T.random(in: .min ... .max, using: &rng)
        }
    }

    private static var scalarRanges: [ClosedRange<UInt32>] {
        [0x20...0x7E, 0x00...0x1F, 0xA0...0x24F, 0x391...0x3C9, 0x4E00...0x9FFF, 0x1F300...0x1F64F]
    }

    mutating func randomString() -> String {
        let length = Int.random(in: 0...12, using: &rng)
        var scalars = String.UnicodeScalarView()
        for _ in 0..<length {
            // Mostly printable ASCII, the rest spread over 1-, 2-, 3- and 4-byte UTF-8.
            let ranges = Self.scalarRanges
            let range = rng.next() % 3 == 0 ? ranges.randomElement(using: &rng)! : ranges[0]
            scalars.append(Unicode.Scalar(UInt32.random(in: range, using: &rng))!)
        }
        return String(scalars)
    }

    mutating func u16(_ value: inout UInt16, _ field: StaticString) { value = integer() }
    mutating func u32(_ value: inout UInt32, _ field: StaticString) { value = integer() }
    mutating func u64(_ value: inout UInt64, _ field: StaticString) { value = integer() }
    mutating func bool(_ value: inout Bool, _ field: StaticString) { value = Bool.random(using: &rng) }
    mutating func string(_ value: inout String, _ field: StaticString) { value = randomString() }

    mutating func bytes(_ value: inout [UInt8], _ field: StaticString) {
        let count = Int.random(in: 0...24, using: &rng)
        value = (0..<count).map { _ in UInt8.random(in: 0...255, using: &rng) }
    }

    mutating func optionalString(_ value: inout String?, _ field: StaticString) {
        value = Bool.random(using: &rng) ? randomString() : nil
    }

    mutating func optionalBytes(_ value: inout [UInt8]?, _ field: StaticString) {
        var bytes: [UInt8] = []
        self.bytes(&bytes, field)
        value = Bool.random(using: &rng) ? bytes : nil
    }

    mutating func enumeration<T: WireEnum>(_ value: inout T, _ field: StaticString) {
        while true {
            if let random = T(rawValue: UInt8(truncatingIfNeeded: rng.next() & 7)) { return value = random }
        }
    }

    mutating func list<T: WireItem>(_ items: inout [T], _ field: StaticString) {
        let count = Int.random(in: 0...max(0, maxItems - depth), using: &rng)
        depth += 1
        defer { depth -= 1 }
        items = (0..<count).map { _ in
            var item = T()
            item.visit(&self)
            return item
        }
    }
}
