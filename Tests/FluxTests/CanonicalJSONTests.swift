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
        #expect(text(.number(number)) == expected)
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
        "1E+2", #"{"k":1,"k":2}"#, #"[[[[[]]]]]"#, "123456789012345678901234567890",
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
        case 2: return .number(Double(Int.random(in: -1_000_000...1_000_000, using: &random)))
        case 3: return .number(Double(bitPattern: random.next() & ~(0x7FF << 52)) * [1, 1e10, 1e300, 1e-300].randomElement(using: &random)!)
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
