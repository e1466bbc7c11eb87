import Testing

@testable import FluxBusProtocol

/// `sameBytes` compares eight bytes at a time and then the rest one by one: a difference must be found wherever it is,
/// in a word or in the tail, and lengths that differ are never equal.
@Suite("Bytes compared a word at a time")
struct SameBytesTests {
    static func same(_ first: [UInt8], _ second: [UInt8]) -> Bool {
        first.withUnsafeBytes { a in second.withUnsafeBytes { b in sameBytes(a, b) } }
    }

    @Test(arguments: [0, 1, 7, 8, 9, 16, 23, 64])
    func aDifferenceAtAnyPositionIsFound(length: Int) {
        let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
        #expect(Self.same(bytes, bytes))
        for position in 0..<length {
            var changed = bytes
            changed[position] ^= 0x80
            #expect(!Self.same(bytes, changed), "a difference at byte \(position) of \(length)")
        }
    }

    @Test func lengthsThatDifferAreNotTheSame() {
        let bytes: [UInt8] = Array(repeating: 0, count: 9)
        #expect(!Self.same(bytes, Array(bytes.prefix(8))))
        #expect(!Self.same([], [0]))
    }

    /// A string's representation is compared first: equal strings with their own storage, small and large, must still
    /// be the same bytes, and canonically equivalent spellings (which `==` calls equal) must not.
    @Test func stringsAreComparedByTheirBytes() {
        let large = String(repeating: "é-long-", count: 8)
        let copy = String(decoding: Array(large.utf8), as: UTF8.self)
        #expect(large.hasSameBytes(as: large))
        #expect(large.hasSameBytes(as: copy), "the same bytes in another storage")
        #expect("kv/set".hasSameBytes(as: String(decoding: Array("kv/set".utf8), as: UTF8.self)))
        #expect("".hasSameBytes(as: String()))
        let (composed, decomposed) = ("caf\u{E9}", "cafe\u{301}")
        #expect(composed == decomposed)
        #expect(!composed.hasSameBytes(as: decomposed))
        #expect(!(large + "x").hasSameBytes(as: large + "y"))
        #expect(!"kv/set".hasSameBytes(as: "kv/sex"))
    }
}
