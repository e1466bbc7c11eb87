import FluxBusProtocol
import Testing

/// ``ReadDigest``: what a dependent read, as workers report it and the coordinator checks it (docs/PROTOCOL.md,
/// "What a dependent read").
@Suite("What a dependent read")
struct ReadDigestTests {
    let country = StoreOutput(store: "country", status: .ok, output: Array(#"{"country":"France"}"#.utf8))
    let city = StoreOutput(store: "city", status: .ok)

    @Test("a run's digest is FNV-1a 64 over the dependencies in name order, as the document spells it")
    func theDocumentedValue() {
        // Worked out by hand from the definition (a Python one-liner over the same bytes).
        #expect(ReadDigest.ran(reading: [("ledger", Array(#"{"count":3}"#.utf8))]) == 0xA9ED_595D_242B_E52E)
        #expect(ReadDigest.ran(reading: [("country", country.output), ("city", nil)]) == 0x9DCE_E21D_7361_C078)
        #expect(ReadDigest.of([country, city]) == 0x9DCE_E21D_7361_C078, "the order the plan names them in does not count")
    }

    @Test("no dependency reads nothing; any that did not succeed reads as skipped, whichever it was")
    func noneAndSkipped() {
        #expect(ReadDigest.of([]) == ReadDigest.none)
        for status in [OutcomeStatus.failed, .skipped, .unknown] {
            let outcome = StoreOutput(store: "city", status: status, message: "\(status)")
            #expect(ReadDigest.of([country, outcome]) == ReadDigest.skipped)
        }
    }

    @Test("what a handler is handed tells runs apart: another output, none, or an empty one")
    func outputsCount() {
        let other = StoreOutput(store: "country", status: .ok, output: Array(#"{"country":"Spain"}"#.utf8))
        let empty = StoreOutput(store: "country", status: .ok, output: [])
        let none = StoreOutput(store: "country", status: .ok)
        let digests = [country, other, empty, none].map { ReadDigest.of([$0]) }
        #expect(Set(digests).count == 4, "\(digests)")
        #expect(!digests.contains(ReadDigest.none) && !digests.contains(ReadDigest.skipped))
        // A message does not reach a handler: an ok decided for a lost store, released without output, reads as none.
        let lost = StoreOutput(store: "country", status: .ok, message: "lost (no live replica); released without output")
        #expect(ReadDigest.of([lost]) == ReadDigest.of([none]))
    }

    @Test("dependencies go in the byte order of their UTF-8 names, as another implementation sorts them")
    func byteOrder() {
        // "e\u{301}" (e and a combining accent) and "é" are equal as Swift strings, and "é" (c3 a9) sorts after
        // "f" (66) by bytes: the digest must follow the bytes, both orders of the input giving the same value.
        let names = ["\u{E9}", "f", "e\u{301}"]
        let bytes = names.map { Array($0.utf8) }.sorted { $0.lexicographicallyPrecedes($1) }
        var hash = StateDigest.offsetBasis
        for name in bytes { for byte in name + [0, 0] { hash = (hash ^ UInt64(byte)) &* StateDigest.prime } }
        #expect(ReadDigest.ran(reading: names.map { ($0, nil) }) == hash)
        #expect(ReadDigest.ran(reading: names.reversed().map { ($0, nil) }) == hash)
    }

    @Test("names and outputs cannot run into each other")
    func boundaries() {
        let joined = ReadDigest.ran(reading: [("ab", Array("c".utf8))])
        let split = ReadDigest.ran(reading: [("a", Array("bc".utf8))])
        #expect(joined != split)
        #expect(ReadDigest.ran(reading: [("a", nil), ("b", nil)]) != ReadDigest.ran(reading: [("ab", nil)]))
    }
}
