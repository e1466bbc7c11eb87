import Foundation
import Testing

@testable import Flux
@testable import FluxStores

/// `counter.add` payloads are read by hand in their plain shape and by `JSONDecoder` otherwise: whichever reads it,
/// a payload must give what `JSONDecoder` gives, and be refused exactly when it refuses it.
@Suite struct CounterPayloadTests {
    @Test(arguments: [
        (#"{"by":1}"#, 1), (#"{"by":-7,"pad":"xxxx"}"#, -7), (#" { "pad" : "" , "by" : 0 } "#, 0), (#"{"by":-0}"#, 0),
        (#"{"by":9223372036854775807}"#, Int.max), (#"{"by":-9223372036854775808}"#, Int.min),
        (#"{"a":true,"b":false,"c":null,"d":-1.5e+3,"by":42}"#, 42),
    ])
    func thePlainShapeIsReadByHand(payload: String, by: Int) throws {
        #expect(FlatJSONObject.integer("by", in: Array(payload.utf8)) == by)
        #expect(try CounterStore.Add(json: Array(payload.utf8)).by == by)
    }

    /// Any key, one letter long included (a one-letter static string may have no pointer to its bytes).
    @Test func anyKeyCanBeRead() {
        #expect(FlatJSONObject.integer("x", in: Array(#"{"by":1,"x":-3}"#.utf8)) == -3)
        #expect(FlatJSONObject.integer("pad", in: Array(#"{"pad":7}"#.utf8)) == 7)
    }

    /// What the hand reader declines, valid or not; `JSONDecoder` then reads or refuses it.
    @Test(arguments: [
        #"{"by":1.0}"#, #"{"by":1e2}"#, #"{"by":"1"}"#, #"{"by":1,"by":2}"#, #"{"b\u0079":1}"#, #"{"by":1,}"#,
        #"{"by":1,"x":[1]}"#, #"{"by":1,"x":"\n"}"#, #"{"by":01}"#, #"{"by":9223372036854775808}"#, #"{}"#, "[]", "",
        #"{"by":1}x"#, #"{"by":1,"é":1}"#, #"{"by":1,"x":-}"#, #"{"by":1"#,
    ])
    func otherShapesGoToFoundation(payload: String) {
        #expect(FlatJSONObject.integer("by", in: Array(payload.utf8)) == nil)
        let ours = try? CounterStore.Add(json: Array(payload.utf8))
        let foundation = try? JSONDecoder().decode(CounterStore.Add.self, from: Data(payload.utf8))
        #expect(ours == foundation)
    }

    /// Random payloads near the plain shape, and damaged copies of them: the result (value or refusal) is always
    /// `JSONDecoder`'s, and a good share of them are taken by the hand reader, so that both sides are exercised.
    @Test func randomPayloadsReadAsFoundationReadsThem() throws {
        var random = SeededRandom(seed: 17)
        var byHand = 0, accepted = 0
        let total = 20_000
        for _ in 0..<total {
            var bytes = Array(Self.payload(using: &random).utf8)
            if random.next() % 3 == 0 { Self.damage(&bytes, using: &random) }
            let foundation = try? JSONDecoder().decode(CounterStore.Add.self, from: Data(bytes))
            let ours = try? CounterStore.Add(json: bytes)
            #expect(ours == foundation, "\(String(decoding: bytes, as: UTF8.self))")
            if let fast = FlatJSONObject.integer("by", in: bytes) {
                byHand += 1
                #expect(fast == foundation?.by, "\(String(decoding: bytes, as: UTF8.self))")
            }
            if foundation != nil { accepted += 1 }
        }
        #expect(byHand > total / 4)
        #expect(accepted > byHand && accepted < total)
    }

    private static let keys = ["by", "by", "by", "pad", "b", "byy", "BY", #"b\u0079"#, "é", "", "x y"]
    private static let values = [
        "0", "1", "-1", "-0", "42", "01", "1.0", "1.5", "1e2", "1E+2", "10e-1", "-", "9223372036854775807",
        "9223372036854775808", "-9223372036854775808", "-9223372036854775809", "123456789012345678901", "1e400",
        #""""#, #""xxxx""#, #""1""#, #""a\"b""#, #""\u0000""#, #""é""#, "true", "false", "null", "tru", "[]", "[1,2]",
        #"{"by":1}"#, "{}",
    ]
    private static let spaces = ["", "", "", " ", "\n", "\t", "\r\n ", "\u{0B}"]

    private static let plainKeys = ["pad", "b", "byy", "BY", "", "x y"]
    private static let plainValues = ["0", "-1", "42", "1.5", "-2E-3", #""""#, #""xxxx""#, "true", "false", "null"]
    private static let plainIntegers = ["0", "1", "-1", "-0", "1000", "9223372036854775807", "-9223372036854775808"]

    private static func payload(using random: inout SeededRandom) -> String {
        func pick(_ list: [String]) -> String { list[Int(random.next() % UInt64(list.count))] }
        if random.next() % 2 == 0 {
            // The plain shape: the hand reader's, unless damaged afterwards.
            var members = (0..<Int(random.next() % 3)).map { _ in "\"" + pick(plainKeys) + "\":" + pick(plainValues) }
            members.insert(#""by":"# + pick(plainIntegers), at: Int(random.next() % UInt64(members.count + 1)))
            return pick(spaces) + "{" + members.joined(separator: "," + pick(spaces)) + "}"
        }
        let members = (0..<Int(random.next() % 4)).map { _ in
            pick(spaces) + "\"" + pick(keys) + "\"" + pick(spaces) + ":" + pick(spaces) + pick(values) + pick(spaces)
        }
        var text = pick(spaces) + "{" + members.joined(separator: ",") + "}" + pick(spaces)
        if random.next() % 2 == 0 { text = #"{"by":"# + pick(values) + (members.isEmpty ? "" : "," + members.joined(separator: ",")) + "}" }
        return text
    }

    /// One byte changed, removed or inserted, or the end cut off.
    private static func damage(_ bytes: inout [UInt8], using random: inout SeededRandom) {
        let structural = Array(#"{}[]":,. -+e0x\"#.utf8) + [0x80, 0xFF, 0x00]
        let at = bytes.isEmpty ? 0 : Int(random.next() % UInt64(bytes.count))
        let byte = structural[Int(random.next() % UInt64(structural.count))]
        switch random.next() % 4 {
        case 0 where !bytes.isEmpty: bytes[at] = byte
        case 1 where !bytes.isEmpty: bytes.remove(at: at)
        case 2: bytes.insert(byte, at: at)
        default: bytes.removeLast(bytes.count - at)
        }
    }
}
