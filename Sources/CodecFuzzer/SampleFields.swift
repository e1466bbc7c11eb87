import FluxBusProtocol

/// A visitor that fills a message of any command with plain, valid values through the codec's own layouts, for the
/// seed corpus: variant 0 is the smallest encoding (empty strings and lists, zeros, absent optionals), variant 1 has
/// short realistic values and one item per list, variant 2 two items per list and the largest integers.
struct SampleFields: WireVisitor {
    typealias Failure = Never

    let variant: Int
    private var depth = 0

    init(variant: Int) {
        self.variant = variant
    }

    /// A sample message of `command`.
    mutating func message(_ command: Command) -> Message {
        Message.make(command, by: &self)
    }

    private var words: [String] { ["counter", "counter.add", "w1", "{\"by\":1}", "city", "país ✈︎"] }
    private mutating func word() -> String {
        depth += 1
        return variant == 0 ? "" : words[(depth + variant) % words.count]
    }

    mutating func u16(_ value: inout UInt16, _ field: StaticString) { value = variant == 2 ? .max : UInt16(variant) }
    mutating func u32(_ value: inout UInt32, _ field: StaticString) { value = variant == 2 ? .max : UInt32(variant * 500) }
    mutating func u64(_ value: inout UInt64, _ field: StaticString) { value = variant == 2 ? .max : UInt64(variant * 42) }
    mutating func bool(_ value: inout Bool, _ field: StaticString) { value = variant == 1 }
    mutating func string(_ value: inout String, _ field: StaticString) { value = word() }
    mutating func bytes(_ value: inout [UInt8], _ field: StaticString) { value = Array(word().utf8) }

    mutating func optionalString(_ value: inout String?, _ field: StaticString) {
        value = variant == 0 ? nil : word()
    }

    mutating func optionalBytes(_ value: inout [UInt8]?, _ field: StaticString) {
        value = variant == 0 ? nil : Array(word().utf8)
    }

    mutating func enumeration<T: WireEnum>(_ value: inout T, _ field: StaticString) {
        value = T(rawValue: UInt8(variant)) ?? value
    }

    mutating func list<T: WireItem>(_ items: inout [T], _ field: StaticString) {
        items = (0..<variant).map { _ in
            var item = T()
            item.visit(&self)
            return item
        }
    }
}
