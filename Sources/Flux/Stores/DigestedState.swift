/// A store state that keeps its own digest up to date as it changes.
///
/// A replica acknowledges every action with the digest of its state, so that replicas that diverge are found. By
/// default the bus computes it from the whole state (FNV-1a 64 of its canonical JSON), which costs time in
/// proportion to the state: fine for a small state, not for a map of a million entries. A state that adopts this
/// protocol answers in constant time instead, typically from a ``MapDigest`` it updates entry by entry.
///
/// Every replica of a store must compute the digest the same way; `docs/PROTOCOL.md` (Appendix A) says how.
public protocol DigestedState {
    /// The digest of the state as it is now.
    var stateDigest: UInt64 { get }
}

/// The order-independent digest of a map: each member's hash is added in when it appears and taken out when it
/// goes, so that an update costs the size of the member, never the size of the map.
///
/// A member is identified by its canonical bytes (for a JSON object, `"key":value` exactly as it would appear in
/// the object). Its hash is FNV-1a 64 of those bytes; the digest is FNV-1a 64 of the member count and the sum of the
/// member hashes modulo 2^64, both as big-endian `u64`.
public struct MapDigest: Hashable, Sendable {
    /// How many members are in.
    public private(set) var count: UInt64 = 0
    /// The sum of their hashes, modulo 2^64.
    public private(set) var sum: UInt64 = 0

    /// An empty map's digest.
    public init() {}

    /// Adds a member.
    public mutating func insert(member bytes: [UInt8]) {
        count &+= 1
        sum &+= FNV1a64.hash(bytes)
    }

    /// Takes out a member that was added before.
    public mutating func remove(member bytes: [UInt8]) {
        count &-= 1
        sum &-= FNV1a64.hash(bytes)
    }

    /// The digest: FNV-1a 64 over `u64 count ‖ u64 sum`, both big-endian.
    public var value: UInt64 {
        var hasher = FNV1a64()
        hasher.combine(bigEndian: count)
        hasher.combine(bigEndian: sum)
        return hasher.value
    }
}

/// FNV-1a 64, the bus's one hash for digests: for each byte, xor it in, then multiply by the prime modulo 2^64.
package struct FNV1a64 {
    package private(set) var value: UInt64 = 0xCBF2_9CE4_8422_2325

    package init() {}

    package mutating func combine(_ byte: UInt8) {
        value = (value ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
    }

    package mutating func combine(bigEndian word: UInt64) {
        for shift in stride(from: 56, through: 0, by: -8) { combine(UInt8(truncatingIfNeeded: word >> UInt64(shift))) }
    }

    package static func hash(_ bytes: [UInt8]) -> UInt64 {
        bytes.withUnsafeBufferPointer { buffer in
            var hasher = FNV1a64()
            for byte in buffer { hasher.combine(byte) }
            return hasher.value
        }
    }
}
