// Seeded random messages for the fuzz and property tests and the socket fuzz peer: tooling that walks the codec's
// own layouts, kept here so that both share one generator. Package-only; no user of the library sees it.

/// SplitMix64 (Steele, Lea and Flood): a tiny, fast, seedable generator, so a failing fuzz run
/// can be replayed from the seed it prints.
package struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    package init(seed: UInt64) {
        state = seed
    }

    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number in `0..<bound`.
    package mutating func below(_ bound: Int) -> Int {
        Int(next() % UInt64(bound))
    }

    /// `count` random bytes.
    package mutating func bytes(_ count: Int) -> [UInt8] {
        (0..<count).map { _ in UInt8(truncatingIfNeeded: next()) }
    }
}

/// A visitor that fills every field it meets with random content: edge-biased integers,
/// strings mixing ASCII, Latin, Greek, CJK and emoji, random bytes, short lists.
///
/// Because it walks the same `visit(_:)` layouts the codec uses, it generates every message
/// and record type without a line of per-type code. The property tests, the 1,000,000-input
/// fuzz test and the socket fuzz peer (`fluxbus-fuzz-peer`) all draw their messages from it.
package struct RandomFiller<R: RandomNumberGenerator>: WireVisitor {
    package typealias Failure = Never

    package var rng: R
    /// The most items a top-level list gets; nested lists get fewer.
    package var maxItems = 3
    private var depth = 0

    package init(rng: R, maxItems: Int = 3) {
        self.rng = rng
        self.maxItems = maxItems
    }

    /// A random message of a random command.
    package mutating func message() -> Message {
        message(Command.allCases.randomElement(using: &rng)!)
    }

    /// A random message of `command`.
    package mutating func message(_ command: Command) -> Message {
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

    package mutating func randomString() -> String {
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

    package mutating func u16(_ value: inout UInt16, _ field: StaticString) { value = integer() }
    package mutating func u32(_ value: inout UInt32, _ field: StaticString) { value = integer() }
    package mutating func u64(_ value: inout UInt64, _ field: StaticString) { value = integer() }
    package mutating func bool(_ value: inout Bool, _ field: StaticString) { value = Bool.random(using: &rng) }
    package mutating func string(_ value: inout String, _ field: StaticString) { value = randomString() }

    package mutating func bytes(_ value: inout [UInt8], _ field: StaticString) {
        let count = Int.random(in: 0...24, using: &rng)
        value = (0..<count).map { _ in UInt8.random(in: 0...255, using: &rng) }
    }

    package mutating func optionalString(_ value: inout String?, _ field: StaticString) {
        value = Bool.random(using: &rng) ? randomString() : nil
    }

    package mutating func optionalBytes(_ value: inout [UInt8]?, _ field: StaticString) {
        var bytes: [UInt8] = []
        self.bytes(&bytes, field)
        value = Bool.random(using: &rng) ? bytes : nil
    }

    package mutating func enumeration<T: WireEnum>(_ value: inout T, _ field: StaticString) {
        while true {
            if let random = T(rawValue: UInt8(truncatingIfNeeded: rng.next() & 7)) { return value = random }
        }
    }

    package mutating func list<T: WireItem>(_ items: inout [T], _ field: StaticString) {
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
