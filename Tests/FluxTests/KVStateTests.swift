import Foundation
import Testing

@testable import Flux
@testable import FluxStores

/// The `kv` store's digest is kept entry by entry; it must equal the digest computed from scratch, whatever the
/// order of changes, and match the vectors in PROTOCOL.md, Appendix A.
@Suite struct KVStateTests {
    @Test func theDigestMatchesThePublishedVectors() {
        #expect(KVState().stateDigest == 0x8820_1fb9_60ff_6465)
        #expect(KVState(["a": .number(1)]).stateDigest == 0xffb7_989d_504d_ae93)
        let two: KVState = ["a": .number(1), "b": .object(["x": .array([.bool(true), .null, .string("\u{1}")]), "y": .number(0.5)])]
        #expect(two.stateDigest == 0xf837_c1af_ba64_b958)
        #expect(CounterStore.State(value: 0).stateDigest == 0xecdd_517c_cad0_b45a)
        #expect(CounterStore.State(value: 42).stateDigest == 0x7019_420c_b4d6_076e)
    }

    /// Random sets and deletes, applied in order: the kept digest is always the one the final map gives from scratch,
    /// and two maps reached by different routes have equal digests exactly when they are equal.
    @Test func theKeptDigestIsTheDigestOfTheMap() throws {
        var random = SeededRandom(seed: 11)
        var kept = KVState()
        for step in 0..<5_000 {
            let key = "k\(random.next() % 200)"
            if random.next() % 4 == 0 {
                kept[key] = nil
            } else {
                kept[key] = JSONValue.random(using: &random, depth: 2)
            }
            if step % 500 == 0 {
                let scratch = KVState(kept.entries)
                #expect(scratch.stateDigest == kept.stateDigest)
                let decoded = try KVState(json: try JSONCoding.encode(kept))
                #expect(decoded == kept && decoded.stateDigest == kept.stateDigest)
            }
        }
        var other = kept
        other["k0"] = .string("something else entirely")
        #expect(other.stateDigest != kept.stateDigest)
        other["k0"] = kept["k0"]
        #expect(other.stateDigest == kept.stateDigest)
    }

    /// The counter hashes its text as it spells it: the digest must be that of the text `writeJSON` writes.
    @Test func theCounterDigestIsTheDigestOfItsText() {
        var random = SeededRandom(seed: 5)
        let edges = [0, 1, -1, 9, 10, -10, 99, 100, Int.max, Int.min, Int.max - 1, Int.min + 1, 1_000_000_000_000_000_000]
        for value in edges + (0..<2_000).map({ _ in Int(bitPattern: UInt(random.next())) >> Int(random.next() % 64) }) {
            let state = CounterStore.State(value: value)
            var text: [UInt8] = []
            state.writeJSON(into: &text)
            #expect(state.stateDigest == FNV1a64.hash(text), "\(value)")
        }
    }

    /// The worker takes the kept digest; a store without one falls back to hashing its whole state.
    @Test func storesReportTheDigestTheyKeep() throws {
        let kv = AnyStore(KVStore.self)
        (kv.instance as! KVStore).state["a"] = .number(1)
        #expect(kv.maintainedDigest() == 0xffb7_989d_504d_ae93)
        #expect(AnyStore(CounterStore.self).maintainedDigest() == 0xecdd_517c_cad0_b45a)
        #expect(AnyStore(CountryStore.self).maintainedDigest() == nil)
    }

    /// `kv.set` and `kv.delete` are read without JSONDecoder; they must read what it reads, and refuse what it refuses.
    @Test func payloadsReadWithoutFoundationMatchIt() throws {
        for payload in [#"{"key":"a","value":{"n":[1,2]}}"#, #"{"value":null,"key":"é","extra":1}"#, #" {"key":"","value":-0.5} "#] {
            let ours = try KVStore.Set(json: Array(payload.utf8))
            let foundation = try JSONDecoder().decode(KVStore.Set.self, from: Data(payload.utf8))
            #expect(ours == foundation)
        }
        for payload in [#"{"key":1,"value":1}"#, #"{"value":1}"#, #"{"key":"a"}"#, "[]", #"{"key":"a","value":1"#] {
            #expect(throws: (any Error).self) { try KVStore.Set(json: Array(payload.utf8)) }
            #expect(throws: (any Error).self) { try JSONDecoder().decode(KVStore.Set.self, from: Data(payload.utf8)) }
        }
        #expect(try KVStore.Delete(json: Array(#"{"key":"gone"}"#.utf8)).key == "gone")
    }
}
