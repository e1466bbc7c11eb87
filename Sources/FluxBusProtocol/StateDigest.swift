/// The digest workers report for a store's state: FNV-1a 64 over its canonical state bytes.
///
/// The codec carries digests as opaque u64s; this is the one definition every worker uses, so
/// replicas of a store can be compared (`StoreStatus.divergedAt`) and a SNAPSHOT checked.
///
/// ```swift
/// StateDigest.fnv1a64(Array("a".utf8))  // 0xAF63DC4C8601EC8C
/// ```
public enum StateDigest {
    /// FNV-1a 64's offset basis, the digest of no bytes.
    public static let offsetBasis: UInt64 = 0xCBF2_9CE4_8422_2325
    /// FNV-1a 64's prime.
    public static let prime: UInt64 = 0x0000_0100_0000_01B3

    /// A digest, or a log chain value, as 16 hex digits: the way `status`, the logs and the errors show them.
    package static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// FNV-1a 64 of `bytes`: for each byte, xor it in, then multiply by ``prime`` modulo 2^64.
    public static func fnv1a64(_ bytes: some Sequence<UInt8>) -> UInt64 {
        var hash = offsetBasis
        for byte in bytes {
            hash = (hash ^ UInt64(byte)) &* prime
        }
        return hash
    }
}
