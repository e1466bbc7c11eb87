import Flux

/// Canonical JSON text, written by hand: no whitespace, object keys sorted by their UTF-8 bytes, strings escaped
/// minimally, numbers exactly, in the layout of ECMAScript's `Number.prototype.toString`. `docs/PROTOCOL.md`
/// (Appendix A) specifies it, because the `kv` store's digest is computed over it and a replica in another language
/// must match.
public enum CanonicalJSON {
    /// Appends `value` as canonical JSON.
    public static func write(_ value: JSONValue, into bytes: inout [UInt8]) {
        switch value {
        case .null: bytes.append(contentsOf: "null".utf8)
        case .bool(let flag): bytes.append(contentsOf: (flag ? "true" : "false").utf8)
        case .number(let number): write(number, into: &bytes)
        case .string(let text): write(text, into: &bytes)
        case .array(let items):
            bytes.append(UInt8(ascii: "["))
            for (index, item) in items.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                write(item, into: &bytes)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let members):
            bytes.append(UInt8(ascii: "{"))
            for (index, key) in sortedKeys(members).enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                writeMember(key, members[key]!, into: &bytes)
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }

    /// Appends one object member, `"key":value`: the bytes a map's member digest is computed over.
    public static func writeMember(_ key: String, _ value: JSONValue, into bytes: inout [UInt8]) {
        write(key, into: &bytes)
        bytes.append(UInt8(ascii: ":"))
        write(value, into: &bytes)
    }

    /// Keys in canonical order: by their UTF-8 bytes, which is the order of their code points.
    public static func sortedKeys(_ members: [String: some Any]) -> [String] {
        members.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    /// Appends a string: `"` and `\` escaped with a backslash, control characters as `\b \t \n \f \r` or `\u00xx`
    /// (lowercase hex), everything else as its UTF-8 bytes.
    public static func write(_ text: String, into bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(UInt8(ascii: "\\")); bytes.append(byte)
            case 0x08: bytes.append(contentsOf: #"\b"#.utf8)
            case 0x09: bytes.append(contentsOf: #"\t"#.utf8)
            case 0x0A: bytes.append(contentsOf: #"\n"#.utf8)
            case 0x0C: bytes.append(contentsOf: #"\f"#.utf8)
            case 0x0D: bytes.append(contentsOf: #"\r"#.utf8)
            case 0x00..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                bytes.append(contentsOf: #"\u00"#.utf8)
                bytes.append(hex[Int(byte >> 4)])
                bytes.append(hex[Int(byte & 0xF)])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// Appends a number in ECMAScript's `Number.prototype.toString` layout, applied to its exact decimal digits:
    /// plain notation for decimal exponents from -6 to 20, exponent notation beyond (`1e+21`, `1.5e-7`); no `-0`.
    /// A number a double holds exactly has the double's shortest digits, so it is written as JavaScript writes the
    /// double; any other keeps all its digits (`9007199254740993`), which a double would have rounded.
    public static func write(_ number: JSONNumber, into bytes: inout [UInt8]) {
        switch number.storage {
        case .integer(let value): bytes.append(contentsOf: String(value).utf8)
        case .decimal(let negative, let digits, let point):
            if negative { bytes.append(UInt8(ascii: "-")) }
            writeLaidOut(digits, point: point, into: &bytes)
        }
    }

    /// Appends a finite double as ECMAScript's `Number.prototype.toString` writes it: the shortest digits that read
    /// back as the same double, laid out as for any ``JSONNumber``.
    public static func write(_ number: Double, into bytes: inout [UInt8]) {
        write(JSONNumber(number), into: &bytes)
    }

    /// Lays out `0.DIGITS × 10^point` (digits without leading or trailing zeros).
    private static func writeLaidOut(_ digits: [UInt8], point: Int, into bytes: inout [UInt8]) {
        let count = digits.count
        if count <= point, point <= 21 {
            bytes.append(contentsOf: digits)
            bytes.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: point - count))
        } else if 0 < point, point <= 21 {
            bytes.append(contentsOf: digits[..<point])
            bytes.append(UInt8(ascii: "."))
            bytes.append(contentsOf: digits[point...])
        } else if -6 < point, point <= 0 {
            bytes.append(contentsOf: "0.".utf8)
            bytes.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: -point))
            bytes.append(contentsOf: digits)
        } else {
            bytes.append(digits[0])
            if count > 1 {
                bytes.append(UInt8(ascii: "."))
                bytes.append(contentsOf: digits[1...])
            }
            let exponent = point - 1
            bytes.append(contentsOf: (exponent < 0 ? "e-" : "e+").utf8)
            bytes.append(contentsOf: String(abs(exponent)).utf8)
        }
    }

    /// The shortest round-tripping decimal digits of a positive finite double (Swift's `description` finds them),
    /// without leading or trailing zeros, and where the decimal point goes: the value is `0.DIGITS × 10^point`.
    static func shortestDigits(_ number: Double) -> (digits: [UInt8], point: Int) {
        let text = number.description.utf8
        var digits: [UInt8] = []
        var point = 0
        var seenPoint = false
        var exponent = 0
        var index = text.startIndex
        while index != text.endIndex {
            let byte = text[index]
            if byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
                exponent = Int(Substring(text[text.index(after: index)...]))!
                break
            }
            if byte == UInt8(ascii: ".") {
                seenPoint = true
            } else if byte != UInt8(ascii: "0") || !digits.isEmpty {
                digits.append(byte)
                if !seenPoint { point += 1 }
            } else if seenPoint {
                point -= 1  // a leading zero after the point
            }
            index = text.index(after: index)
        }
        // Zeros kept before the point are part of the integer part; trailing zeros after the last digit are not.
        while digits.last == UInt8(ascii: "0") { digits.removeLast() }
        return (digits, point + exponent)
    }
}
