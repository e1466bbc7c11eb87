import Foundation
import Testing

@testable import FluxStores

/// The canonical JSON the `kv` digest is computed over (PROTOCOL.md, Appendix A), and the reader that takes
/// payloads and states off the hot path: both checked against fixed vectors and against Foundation.
@Suite struct CanonicalJSONTests {
    private func text(_ value: JSONValue) -> String {
        var bytes: [UInt8] = []
        CanonicalJSON.write(value, into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test(arguments: [
        (1.0, "1"), (-0.0, "0"), (-42.0, "-42"), (0.1, "0.1"), (-2.5, "-2.5"), (123.456, "123.456"),
        (0.000001, "0.000001"), (1e-7, "1e-7"), (1.5e-7, "1.5e-7"), (1e20, "100000000000000000000"),
        (1e21, "1e+21"), (1.25e22, "1.25e+22"), (0x1p53, "9007199254740992"), (5e-324, "5e-324"),
        (1.7976931348623157e308, "1.7976931348623157e+308"), (100.5, "100.5"), (0.5, "0.5"),
    ])
    func numbersAreWrittenAsECMAScriptWritesThem(number: Double, expected: String) {
        #expect(text(.number(JSONNumber(number))) == expected)
    }

    @Test func stringsEscapeOnlyWhatJSONRequires() {
        #expect(text(.string("a\"b\\c/d\u{1}\u{8}\t\n\u{c}\r\u{1f}é☃😀")) == #""a\"b\\c/d\u0001\b\t\n\f\r\u001fé☃😀""#)
    }

    @Test func objectsSortTheirKeysByTheirBytes() {
        let value = JSONValue.object(["b": .array([.bool(true), .null]), "a": .number(1), "é": .string(""), "Z": .bool(false)])
        #expect(text(value) == #"{"Z":false,"a":1,"b":[true,null],"é":""}"#)
    }

    @Test(arguments: [
        #"{"a":[1,2.5,-3e2,"x\ny",{"b":null}],"c":true}"#, #"  "\u00e9\ud83d\ude00\/"  "#, "[]", "{}", "0", "-0.0",
        "1E+2", #"{"k":1,"k":2}"#, #"[[[[[]]]]]"#, "12345678901234567890", "-9223372036854775808", "0.1",
    ])
    func theReaderAgreesWithFoundation(document: String) throws {
        let ours = try JSONValue(json: Array(document.utf8))
        let foundation = try JSONDecoder().decode(JSONValue.self, from: Data(document.utf8))
        #expect(ours == foundation)
    }

    @Test(arguments: [
        "[1,]", "{\"a\":1,}", "01", "+1", ".5", "1.", "1e", "\"\u{1}\"", #""\ud800""#, #""\udc00""#, "1e400", "nul",
        "[1] 2", "", "{\"a\" 1}", #""\x""#, "[", "{",
    ])
    func theReaderRejectsWhatIsNotJSON(document: String) {
        #expect(throws: (any Error).self) { try JSONValue(json: Array(document.utf8)) }
    }

    @Test func theReaderRejectsInvalidUTF8AndDeepNesting() {
        #expect(throws: (any Error).self) { try JSONValue(json: [0x22, 0xFF, 0x22]) }
        let deep = String(repeating: "[", count: 600) + String(repeating: "]", count: 600)
        #expect(throws: (any Error).self) { try JSONValue(json: Array(deep.utf8)) }
        let allowed = String(repeating: "[", count: 500) + String(repeating: "]", count: 500)
        #expect(throws: Never.self) { try JSONValue(json: Array(allowed.utf8)) }
    }

    /// Whatever the writer writes, the reader (and Foundation) reads back as the same value.
    @Test func randomValuesRoundTrip() throws {
        var random = SeededRandom(seed: 7)
        for _ in 0..<2_000 {
            let value = JSONValue.random(using: &random, depth: 3)
            var bytes: [UInt8] = []
            CanonicalJSON.write(value, into: &bytes)
            #expect(try JSONValue(json: bytes) == value)
            #expect(try JSONDecoder().decode(JSONValue.self, from: Data(bytes)) == value)
        }
    }
}

/// Numbers are kept exactly (`JSONNumber`), and every number a double held exactly is written as it was before, so
/// that digests, checkpoints and snapshots made before still agree.
extension CanonicalJSONTests {
    @Test(arguments: [
        ("9007199254740993", "9007199254740993"), ("12345678901234567890", "12345678901234567890"),
        ("-9223372036854775808", "-9223372036854775808"), ("9223372036854775808", "9223372036854775808"),
        ("18446744073709551615", "18446744073709551615"), ("-18446744073709551617", "-18446744073709551617"),
        ("100000000000000000001", "100000000000000000001"), ("0.10000000000000000001", "0.10000000000000000001"),
        ("123456789012345678901234567890", "1.2345678901234567890123456789e+29"), ("9007199254740993e-5", "90071992547.40993"),
        ("2.5e-324", "2.5e-324"), ("1.50", "1.5"), ("-0.0", "0"), ("0e-400", "0"), ("1E+2", "100"), ("00.5e1", ""),
    ])
    func numbersKeepEveryDigit(literal: String, expected: String) throws {
        guard !expected.isEmpty else {
            #expect(throws: (any Error).self) { try JSONValue(json: Array(literal.utf8)) }  // a leading zero is not JSON
            return
        }
        let number = try JSONValue(json: Array(literal.utf8))
        #expect(text(number) == expected)
        #expect(try JSONValue(json: Array(expected.utf8)) == number, "the canonical text reads back as the same number")
    }

    /// What the writer wrote for a double before numbers were exact; it pins the bytes existing states hold.
    static func textAsWrittenBefore(_ number: Double) -> String {
        if number == number.rounded(.towardZero), abs(number) < 0x1p53 { return String(Int64(number)) }
        let (digits, point) = CanonicalJSON.shortestDigits(abs(number))
        let text = String(decoding: digits, as: UTF8.self), count = digits.count, sign = number < 0 ? "-" : ""
        if count <= point, point <= 21 { return sign + text + String(repeating: "0", count: point - count) }
        if 0 < point, point <= 21 { return sign + text.prefix(point) + "." + text.dropFirst(point) }
        if -6 < point, point <= 0 { return sign + "0." + String(repeating: "0", count: -point) + text }
        let exponent = point - 1
        return sign + text.prefix(1) + (count > 1 ? "." + text.dropFirst() : "") + (exponent < 0 ? "e-" : "e+") + String(abs(exponent))
    }

    /// Every double is written as before; its text reads back (as a checkpoint or snapshot is restored) as the same
    /// number, written the same; and a literal that reads back from a double as itself keeps the double's text.
    @Test func numbersADoubleHoldsAreWrittenAsBefore() throws {
        var random = SeededRandom(seed: 23)
        let edges: [Double] = [0, -0.0, 1, -1, 1.5, 0.1, 0.2 + 0.1, 1e21, 1e-7, 0x1p53, 0x1p53 + 2, 0x1p60, 0x1p63, 0x1p64,
                               -0x1p63, 1.8e19, 123e-20, .leastNonzeroMagnitude, .greatestFiniteMagnitude, .leastNormalMagnitude, 1e20, 1e22]
        let randomDoubles = (0..<20_000).map { index -> Double in
            let bits = Double(bitPattern: random.next())
            if bits.isFinite, index % 2 == 0 { return bits }
            return Double(Int64(bitPattern: random.next()) >> (random.next() % 64))  // integers of every size
        }
        for double in edges + randomDoubles where double.isFinite {
            let before = Self.textAsWrittenBefore(double)
            #expect(text(.number(JSONNumber(double))) == before, "\(double)")
            let restored = try JSONValue(json: Array(before.utf8))
            #expect(restored == .number(JSONNumber(double)) && text(restored) == before, "\(before)")
            let literal = "\(double)"  // Swift's shortest text: it reads back as the same double
            #expect(text(try JSONValue(json: Array(literal.utf8))) == before, "\(literal)")
        }
    }

    @Test func numbersAreEqualByValue() throws {
        #expect(JSONNumber("1.0") == JSONNumber(1) && JSONNumber("1e2") == 100 && JSONNumber("-0") == 0)
        #expect(JSONNumber("18446744073709551615") == JSONNumber(UInt64.max))
        #expect(JSONNumber("9007199254740993") != JSONNumber("9007199254740992"))
        #expect(JSONNumber("0.10000000000000000001") != 0.1)
        #expect(Set([JSONNumber("2.50")!, JSONNumber("25e-1")!]).count == 1)
        #expect(JSONNumber("9007199254740993")?.int64 == 9_007_199_254_740_993)
        #expect(JSONNumber("12345678901234567890")?.int64 == nil)
        #expect(JSONNumber("1 ") == nil && JSONNumber("x") == nil && JSONNumber("[1]") == nil)
    }

    /// A number beyond a double's range is refused, with a message naming it, rather than kept or rounded to 0.
    @Test(arguments: [("1e400", "too large"), ("-1.0E+400", "too large"), ("1e-400", "too small"), ("-1e-99999999999999999999", "too small")])
    func numbersBeyondADoublesRangeAreRefused(literal: String, reason: String) {
        #expect {
            try JSONValue(json: Array(#"{"value":\#(literal)}"#.utf8))
        } throws: { error in
            "\(error)".contains(reason) && "\(error)".contains(literal)
        }
    }

    /// A repeated key keeps its first value, as `JSONDecoder` reads every other store's payload, so that a logged
    /// action replays alike on every version; a new payload is refused instead, loudly.
    @Test func aRepeatedKeyKeepsItsFirstValueInAStoreAndIsRefusedInANewPayload() throws {
        let document = Array(#"{"k":1,"n":{"a":true,"a":false},"k":2}"#.utf8)
        #expect(try JSONValue(json: document) == .object(["k": .number(1), "n": .object(["a": .bool(true)])]))
        #expect(try JSONValue(newPayload: Array(#"{"k":1,"n":{"a":2}}"#.utf8)) == .object(["k": .number(1), "n": .object(["a": .number(2)])]))
        #expect {
            try JSONValue(newPayload: document)
        } throws: { error in
            "\(error)".contains(#"the key "a" appears twice"#) && "\(error)".contains("byte 21")
        }
    }

    /// `JSONEncoder` and `JSONDecoder` see numbers as Swift types: integers pass exactly, and a number that no
    /// Swift number type holds is refused by the encoder rather than rounded.
    @Test func foundationCodingKeepsIntegersAndRefusesToRound() throws {
        let big = JSONValue.number(JSONNumber("12345678901234567890")!)
        #expect(String(decoding: try JSONEncoder().encode([big]), as: UTF8.self) == "[12345678901234567890]")
        #expect(try JSONDecoder().decode(JSONValue.self, from: Data("12345678901234567890".utf8)) == big)
        #expect(try JSONDecoder().decode(JSONValue.self, from: Data("-9007199254740993".utf8)) == .number(-9_007_199_254_740_993))
        #expect(throws: EncodingError.self) { try JSONEncoder().encode([JSONValue.number(JSONNumber("0.10000000000000000001")!)]) }
    }
}

/// A SplitMix64 stream, so that a failing case comes back the same.
struct SeededRandom: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension JSONValue {
    static func random(using random: inout SeededRandom, depth: Int) -> JSONValue {
        switch Int.random(in: 0..<(depth > 0 ? 7 : 5), using: &random) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &random))
        case 2: return .number(JSONNumber(Int.random(in: -1_000_000...1_000_000, using: &random)))
        case 3: return .number(JSONNumber(Double(bitPattern: random.next() & ~(0x7FF << 52)) * [1, 1e10, 1e300, 1e-300].randomElement(using: &random)!))
        case 4: return .string(String((0..<Int.random(in: 0...8, using: &random)).map { _ in
            Character(Unicode.Scalar(Array<UInt32>([0x1, 0x22, 0x5C, 0x41, 0xE9, 0x2603, 0x1F600]).randomElement(using: &random)!)!)
        }))
        case 5: return .array((0..<Int.random(in: 0...3, using: &random)).map { _ in JSONValue.random(using: &random, depth: depth - 1) })
        default:
            var members: [String: JSONValue] = [:]
            for index in 0..<Int.random(in: 0...3, using: &random) { members["k\(index)\(random.next() % 5)"] = JSONValue.random(using: &random, depth: depth - 1) }
            return .object(members)
        }
    }
}
