import Flux

/// A strict JSON reader (RFC 8259) straight into ``JSONValue``, for the hot path: it reads a `kv.set` payload
/// several times faster than `JSONDecoder`, and a large state without building a second tree.
///
/// It accepts what `JSONDecoder` accepts for a ``JSONValue`` and rejects the rest: a trailing comma, a lone
/// surrogate, invalid UTF-8, a number out of a double's range, nesting deeper than 512. It keeps every number exactly
/// (``JSONNumber``), where `JSONDecoder` rounds to a double.
///
/// A key given twice keeps its first value, as `JSONDecoder` does for every other store's payload: an action already
/// in a log must replay to the same state on every version. New payloads are checked with `refusingDuplicateKeys`
/// before they are sent (`fluxbus dispatch`), so that the ambiguity is refused where it can be fixed.
struct JSONParser {
    /// What is wrong with the input, and where.
    struct Failure: Error, CustomStringConvertible {
        let reason: String
        let offset: Int
        var description: String { "invalid JSON at byte \(offset): \(reason)" }
    }

    static let maximumDepth = 512

    private let bytes: UnsafeBufferPointer<UInt8>
    private let refusingDuplicateKeys: Bool
    private var at = 0
    private var depth = 0

    /// Parses one JSON document: a value surrounded by nothing but whitespace.
    static func parse(_ input: [UInt8], refusingDuplicateKeys: Bool = false) throws(Failure) -> JSONValue {
        try input.withUnsafeBufferPointer { (buffer) throws(Failure) -> JSONValue in
            var parser = JSONParser(bytes: buffer, refusingDuplicateKeys: refusingDuplicateKeys)
            let value = try parser.value()
            parser.skipWhitespace()
            guard parser.at == buffer.count else { throw parser.failure("unexpected bytes after the value") }
            return value
        }
    }

    private init(bytes: UnsafeBufferPointer<UInt8>, refusingDuplicateKeys: Bool) {
        self.bytes = bytes
        self.refusingDuplicateKeys = refusingDuplicateKeys
    }

    private func failure(_ reason: String) -> Failure { Failure(reason: reason, offset: at) }

    private mutating func skipWhitespace() {
        while at < bytes.count {
            switch bytes[at] {
            case 0x20, 0x09, 0x0A, 0x0D: at += 1
            default: return
            }
        }
    }

    private mutating func value() throws(Failure) -> JSONValue {
        skipWhitespace()
        guard at < bytes.count else { throw failure("the input ends where a value should be") }
        switch bytes[at] {
        case UInt8(ascii: "{"): return try nested { (parser: inout JSONParser) throws(Failure) in try parser.object() }
        case UInt8(ascii: "["): return try nested { (parser: inout JSONParser) throws(Failure) in try parser.array() }
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
        default: throw failure("unexpected byte 0x\(String(bytes[at], radix: 16))")
        }
    }

    private mutating func nested(_ body: (inout JSONParser) throws(Failure) -> JSONValue) throws(Failure) -> JSONValue {
        depth += 1
        defer { depth -= 1 }
        guard depth <= Self.maximumDepth else { throw failure("nested deeper than \(Self.maximumDepth)") }
        return try body(&self)
    }

    private mutating func object() throws(Failure) -> JSONValue {
        at += 1
        var members: [String: JSONValue] = [:]
        skipWhitespace()
        if at < bytes.count, bytes[at] == UInt8(ascii: "}") { at += 1; return .object(members) }
        while true {
            skipWhitespace()
            guard at < bytes.count, bytes[at] == UInt8(ascii: "\"") else { throw failure("expected a key in quotes") }
            let keyStart = at
            let key = try string()
            try expect(UInt8(ascii: ":"))
            let member = try value()
            if members[key] == nil {
                members[key] = member
            } else if refusingDuplicateKeys {
                at = keyStart
                throw failure("the key \"\(key)\" appears twice in an object; give each key once")
            }
            skipWhitespace()
            guard at < bytes.count else { throw failure("the input ends inside an object") }
            if bytes[at] == UInt8(ascii: "}") { at += 1; return .object(members) }
            guard bytes[at] == UInt8(ascii: ",") else { throw failure("expected , or } in an object") }
            at += 1
        }
    }

    private mutating func array() throws(Failure) -> JSONValue {
        at += 1
        var items: [JSONValue] = []
        skipWhitespace()
        if at < bytes.count, bytes[at] == UInt8(ascii: "]") { at += 1; return .array(items) }
        while true {
            items.append(try value())
            skipWhitespace()
            guard at < bytes.count else { throw failure("the input ends inside an array") }
            if bytes[at] == UInt8(ascii: "]") { at += 1; return .array(items) }
            guard bytes[at] == UInt8(ascii: ",") else { throw failure("expected , or ] in an array") }
            at += 1
        }
    }

    private mutating func expect(_ byte: UInt8) throws(Failure) {
        skipWhitespace()
        guard at < bytes.count, bytes[at] == byte else { throw failure("expected \(Character(Unicode.Scalar(byte)))") }
        at += 1
    }

    private mutating func literal(_ word: StaticString) throws(Failure) {
        let count = word.utf8CodeUnitCount
        guard bytes.count - at >= count,
            UnsafeBufferPointer(start: word.utf8Start, count: count).elementsEqual(bytes[at..<at + count])
        else { throw failure("expected \(word)") }
        at += count
    }

    /// Reads a number exactly (see ``JSONNumber``); a plain integer of up to 18 digits, the common case, without
    /// building a string. A magnitude beyond a double's range is refused rather than kept, so that a replica in a
    /// language without big decimals can still read every state.
    private mutating func number() throws(Failure) -> JSONNumber {
        let start = at
        let negative = bytes[at] == UInt8(ascii: "-")
        if negative { at += 1 }
        guard at < bytes.count, isDigit(bytes[at]) else { throw failure("a number needs a digit") }
        let integerPart = at
        if bytes[at] == UInt8(ascii: "0") { at += 1 } else { skipDigits() }
        let integerDigits = at - integerPart
        var fractionPart = at..<at
        if at < bytes.count, bytes[at] == UInt8(ascii: ".") {
            at += 1
            guard at < bytes.count, isDigit(bytes[at]) else { throw failure("a fraction needs a digit") }
            let fractionStart = at
            skipDigits()
            fractionPart = fractionStart..<at
        }
        var exponent = 0
        var hasExponent = false
        if at < bytes.count, bytes[at] | 0x20 == UInt8(ascii: "e") {
            hasExponent = true
            at += 1
            let negativeExponent = at < bytes.count && bytes[at] == UInt8(ascii: "-")
            if at < bytes.count, bytes[at] == UInt8(ascii: "+") || bytes[at] == UInt8(ascii: "-") { at += 1 }
            guard at < bytes.count, isDigit(bytes[at]) else { throw failure("an exponent needs a digit") }
            while at < bytes.count, isDigit(bytes[at]) {
                // Saturated: far beyond a double's range either way, and refused or zero below.
                exponent = min(exponent * 10 + Int(bytes[at] - UInt8(ascii: "0")), 1_000_000_000)
                at += 1
            }
            if negativeExponent { exponent = -exponent }
        }
        if fractionPart.isEmpty, !hasExponent, integerDigits <= 18 {
            var value: Int64 = 0
            for byte in bytes[integerPart..<integerPart + integerDigits] { value = value * 10 + Int64(byte - UInt8(ascii: "0")) }
            return JSONNumber(negative ? -value : value)
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<at]), as: UTF8.self)
        let shown = text.count > 40 ? String(text.prefix(40)) + "…" : text
        guard let nearest = Double(text), nearest.isFinite else {
            at = start
            throw failure("the number \(shown) is too large: FluxBus keeps numbers exactly up to a double's range, 1.8e308")
        }
        let number = JSONNumber(
            negative: negative, digits: Array(bytes[integerPart..<integerPart + integerDigits]) + Array(bytes[fractionPart]),
            point: integerDigits + exponent)
        guard nearest != 0 || number == 0 else {
            at = start
            throw failure("the number \(shown) is too small: FluxBus keeps numbers exactly down to a double's range, 5e-324")
        }
        return number
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private mutating func skipDigits() {
        while at < bytes.count, isDigit(bytes[at]) { at += 1 }
    }

    private mutating func string() throws(Failure) -> String {
        at += 1
        let start = at
        // The common case: no escapes, so the bytes are the string once they are valid UTF-8.
        while at < bytes.count, bytes[at] != UInt8(ascii: "\""), bytes[at] != UInt8(ascii: "\\"), bytes[at] >= 0x20 { at += 1 }
        guard at < bytes.count else { throw failure("the input ends inside a string") }
        if bytes[at] == UInt8(ascii: "\"") {
            at += 1
            return try validated(UnsafeBufferPointer(rebasing: bytes[start..<at - 1]), from: start)
        }
        var utf8 = Array(UnsafeBufferPointer(rebasing: bytes[start..<at]))
        while bytes[at] != UInt8(ascii: "\"") {
            guard bytes[at] == UInt8(ascii: "\\") else { throw failure("a control character must be escaped in a string") }
            try escape(into: &utf8)
            while at < bytes.count, bytes[at] != UInt8(ascii: "\""), bytes[at] != UInt8(ascii: "\\"), bytes[at] >= 0x20 {
                utf8.append(bytes[at])
                at += 1
            }
            guard at < bytes.count else { throw failure("the input ends inside a string") }
        }
        at += 1
        return try utf8.withUnsafeBufferPointer { (buffer) throws(Failure) in try validated(buffer, from: start) }
    }

    private mutating func validated(_ utf8: UnsafeBufferPointer<UInt8>, from start: Int) throws(Failure) -> String {
        // ASCII needs no validation, and is most keys and values.
        if !utf8.contains(where: { $0 >= 0x80 }) { return String(decoding: utf8, as: UTF8.self) }
        guard let text = String(validating: utf8, as: UTF8.self) else {
            at = start
            throw failure("a string is not valid UTF-8")
        }
        return text
    }

    private mutating func escape(into utf8: inout [UInt8]) throws(Failure) {
        at += 1
        guard at < bytes.count else { throw failure("the input ends inside an escape") }
        if let byte = Self.unescaped(bytes[at]) {
            utf8.append(byte)
            at += 1
            return
        }
        guard bytes[at] == UInt8(ascii: "u") else { throw failure("unknown escape") }
        var scalar = try hex4()
        if (0xD800..<0xDC00).contains(scalar) {
            guard bytes.count - at >= 2, bytes[at] == UInt8(ascii: "\\"), bytes[at + 1] == UInt8(ascii: "u") else {
                throw failure("a high surrogate without its low surrogate")
            }
            at += 1
            let low = try hex4()
            guard (0xDC00..<0xE000).contains(low) else { throw failure("a high surrogate without its low surrogate") }
            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
        }
        guard let unicode = Unicode.Scalar(scalar) else { throw failure("a lone low surrogate") }
        utf8.append(contentsOf: String(Character(unicode)).utf8)
    }

    /// The byte a one-letter escape stands for.
    private static func unescaped(_ letter: UInt8) -> UInt8? {
        switch letter {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): letter
        case UInt8(ascii: "b"): 0x08
        case UInt8(ascii: "f"): 0x0C
        case UInt8(ascii: "n"): 0x0A
        case UInt8(ascii: "r"): 0x0D
        case UInt8(ascii: "t"): 0x09
        default: nil
        }
    }

    /// Reads `uXXXX` (the `u` included), returning the code unit.
    private mutating func hex4() throws(Failure) -> UInt32 {
        at += 1
        guard bytes.count - at >= 4 else { throw failure("\\u needs four hex digits") }
        var unit: UInt32 = 0
        for _ in 0..<4 {
            guard let digit = hexDigit(bytes[at]) else { throw failure("\\u needs four hex digits") }
            unit = unit << 4 | digit
            at += 1
        }
        return unit
    }

    private func hexDigit(_ byte: UInt8) -> UInt32? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt32(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt32(byte - UInt8(ascii: "A") + 10)
        default: nil
        }
    }
}
