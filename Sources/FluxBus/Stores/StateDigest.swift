/// The digest of a store's state: FNV-1a (64-bit) over its canonical JSON (sorted keys).
///
/// Replicas that applied the same actions have equal states, equal canonical bytes, and so equal digests; the
/// coordinator compares them per sequence to find divergence. It is a checksum, not a cryptographic hash.
package enum StateDigest {
    package static func of(_ bytes: [UInt8]) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        return hash
    }

    /// A digest as 16 hex digits, as `status` shows it.
    package static func hex(_ digest: UInt64) -> String {
        let digits = String(digest, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
