/// The log's running hash: each entry's chain value covers every entry before it, so two logs (or a log and a
/// worker) that agree on the chain at a sequence agree on the whole history up to it.
///
/// `h(0) = 0`, and for the entry with sequence `n`:
/// `h(n) = FNV-1a 64( u64(h(n-1)) ‖ u64(n) ‖ string(actionType) ‖ bytes(payload) ‖ optional string(error) )`,
/// each field in its wire encoding (docs/PROTOCOL.md, "Primitive types"; appendix B). The epoch is left out: a
/// dispatch published again after a restart is the same entry under a new epoch.
///
/// ```swift
/// LogChain.next(after: 0, sequence: 1, actionType: "counter.add", payload: Array(#"{"by":1}"#.utf8), error: nil)
/// // 0xB7E0_FB4B_57F8_B6B7 (the test vector in docs/PROTOCOL.md)
/// ```
public enum LogChain {
    /// The chain value after the entry with `sequence`, given the value after the entry before it.
    public static func next(after previous: UInt64, sequence: UInt64, actionType: String, payload: [UInt8], error: String?) -> UInt64 {
        var hasher = WireHasher()
        hasher.u64(previous)
        hasher.u64(sequence)
        hasher.string(actionType)
        hasher.bytes(payload)
        hasher.optionalString(error)
        return hasher.value
    }

    /// The chain value after `action`, logged as `sequence`.
    public static func next(after previous: UInt64, sequence: UInt64, action: BatchAction) -> UInt64 {
        next(after: previous, sequence: sequence, actionType: action.actionType, payload: action.payload, error: action.error)
    }
}

/// What a request asked for, as a number: a request id used again with other actions is refused, not answered with
/// the first request's result.
///
/// `FNV-1a 64( u16(count) ‖ for each action: string(actionType) ‖ bytes(payload) ‖ optional string(error) )`.
public enum RequestFingerprint {
    public static func of(_ actions: [BatchAction]) -> UInt64 {
        var hasher = WireHasher()
        hasher.u16(UInt16(truncatingIfNeeded: actions.count))
        for action in actions {
            hasher.string(action.actionType)
            hasher.bytes(action.payload)
            hasher.optionalString(action.error)
        }
        return hasher.value
    }
}

/// FNV-1a 64 fed with fields in their wire encoding, without building the bytes. Every field goes through `raw`, one
/// loop over contiguous bytes: a byte at a time through generic iteration cost about 17 instructions a byte, and
/// every entry a replica applies or the coordinator serves is hashed.
struct WireHasher {
    private(set) var value = StateDigest.offsetBasis

    mutating func byte(_ byte: UInt8) { value = (value ^ UInt64(byte)) &* StateDigest.prime }

    mutating func u16(_ number: UInt16) { bigEndian(number) }

    mutating func u32(_ number: UInt32) { bigEndian(number) }

    mutating func u64(_ number: UInt64) { bigEndian(number) }

    private mutating func bigEndian(_ number: some FixedWidthInteger) {
        withUnsafeBytes(of: number.bigEndian) { raw($0.assumingMemoryBound(to: UInt8.self)) }
    }

    mutating func string(_ text: String) {
        var text = text
        text.withUTF8 { utf8 in
            u16(UInt16(truncatingIfNeeded: utf8.count))
            raw(utf8)
        }
    }

    mutating func bytes(_ bytes: [UInt8]) {
        u32(UInt32(truncatingIfNeeded: bytes.count))
        bytes.withUnsafeBufferPointer { raw($0) }
    }

    /// Bytes already in wire encoding, as they are.
    mutating func raw(_ bytes: UnsafeBufferPointer<UInt8>) {
        var hash = value
        for unit in bytes { hash = (hash ^ UInt64(unit)) &* StateDigest.prime }
        value = hash
    }

    mutating func optionalString(_ text: String?) {
        guard let text else { return byte(0) }
        byte(1)
        string(text)
    }
}
