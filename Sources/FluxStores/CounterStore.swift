import Flux

/// The simplest probe that nothing was lost or applied twice: a number that only `counter.add` changes.
public final class CounterStore: Store {
    /// The payload of `counter.add`.
    public struct Add: Codable, Sendable, Hashable {
        public var by: Int
        public init(by: Int) { self.by = by }
    }

    /// The counter's state, `{"value": N}` on the wire.
    public struct State: Codable, Sendable, Hashable {
        public var value: Int
        public init(value: Int = 0) { self.value = value }
    }

    /// `counter.add {"by": N}`.
    public static let add = ActionType<Add>("counter.add")

    public static let name = "counter"
    public static let handlers = Handlers<CounterStore>()
        .on(add) { store, action, _ in
            let (sum, overflow) = store.state.value.addingReportingOverflow(action.payload.by)
            guard !overflow else {
                throw ActionError("adding \(action.payload.by) to \(store.state.value) overflows a 64-bit counter; the value is unchanged")
            }
            store.state.value = sum
        }

    public var state = State()
    public init() {}
}

// The counter's state is tiny but acknowledged with every action: write it and digest it without `JSONEncoder`.
extension CounterStore.State: DigestedState, JSONWritable {
    public func writeJSON(into bytes: inout [UInt8]) {
        bytes.append(contentsOf: #"{"value":"#.utf8)
        bytes.append(contentsOf: String(value).utf8)
        bytes.append(UInt8(ascii: "}"))
    }

    /// FNV-1a 64 of `{"value":N}`, the same as the whole-state digest of any store. Hashed as it is spelled, without
    /// building the text: every acknowledgement carries it.
    public var stateDigest: UInt64 {
        var hasher = FNV1a64()
        for byte in #"{"value":"#.utf8 { hasher.combine(byte) }
        if value < 0 { hasher.combine(UInt8(ascii: "-")) }
        // The decimal digits of the magnitude, most significant first, as `String(value)` writes them.
        let magnitude = UInt64(value.magnitude)
        var power: UInt64 = 1
        while magnitude / power >= 10 { power *= 10 }
        while power > 0 {
            hasher.combine(UInt8(ascii: "0") + UInt8(magnitude / power % 10))
            power /= 10
        }
        hasher.combine(UInt8(ascii: "}"))
        return hasher.value
    }
}

// `counter.add` is the commonest action of the benchmarks and of batches: `JSONDecoder` cost more than the rest of a
// worker's dispatch. The plain shape is read by hand; every other input goes to `JSONDecoder`, which decides.
extension CounterStore.Add: JSONReadable {
    public init(json bytes: [UInt8]) throws {
        if let by = FlatJSONObject.integer("by", in: bytes) {
            self.init(by: by)
        } else {
            self = try JSONCoding.decodeWithFoundation(Self.self, from: bytes)
        }
    }
}
