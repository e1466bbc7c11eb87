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

    /// The probe's values, set as a worker applies `kv.set`, then carried by the state's bytes to a replica, as a
    /// checkpoint or snapshot carries them: every digit survives, and the digest is the exact value's.
    @Test func largeIntegersSurviveTheStateBytes() throws {
        let store = AnyStore(KVStore.self)
        for (index, payload) in [#"{"key":"a","value":9007199254740993}"#, #"{"key":"b","value":[12345678901234567890]}"#].enumerated() {
            let context = DispatchContext(sequence: UInt64(index + 1), store: "kv", dependencies: [], outputs: [:], cascade: { _ in })
            _ = try store.apply(AnyAction(name: "kv.set", json: Array(payload.utf8), error: nil), context: context)
        }
        let bytes = try store.encodedState()
        #expect(String(decoding: bytes, as: UTF8.self) == #"{"a":9007199254740993,"b":[12345678901234567890]}"#)
        let replica = AnyStore(KVStore.self)
        try replica.restore(fromJSON: bytes)
        let state = (replica.instance as! KVStore).state
        #expect(state["a"] == .number(9_007_199_254_740_993))
        #expect(state["b"] == .array([.number(JSONNumber(12_345_678_901_234_567_890 as UInt64))]))
        #expect(replica.maintainedDigest() == store.maintainedDigest())
        let rounded: KVState = ["a": .number(JSONNumber(9_007_199_254_740_992.0)), "b": .array([.number(JSONNumber(12_345_678_901_234_567_890.0))])]
        #expect(replica.maintainedDigest() != rounded.stateDigest)
    }

    /// A client's typed `kv.set` is written by hand, every digit included, and read back as the same value.
    @Test func aTypedSetKeepsItsNumber() throws {
        let set = KVStore.Set(key: "a", value: .array([.number(JSONNumber("12345678901234567890.5")!), .number(1.5)]))
        let bytes = try JSONCoding.encode(set)
        #expect(String(decoding: bytes, as: UTF8.self) == #"{"key":"a","value":[12345678901234567890.5,1.5]}"#)
        #expect(try JSONCoding.decode(KVStore.Set.self, from: bytes) == set)
    }
}
