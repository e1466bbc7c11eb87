/// Reads one member of a flat JSON object without `JSONDecoder`, for payloads and outputs on the bus's hot path such
/// as `counter.add {"by":1,"pad":"…"}` or the flight example's `{"city":"Paris","country":"France"}`.
///
/// It only answers for the plain shape clients and ``CanonicalJSON`` write: an object whose keys are ASCII without
/// escapes, whose values are ASCII strings without escapes, numbers, `true`, `false` or `null`, and whose wanted member
/// appears at most once, as the type asked for (or `null`). Anything else (nesting, escapes, non-ASCII bytes, `1.0` for
/// an integer, a repeated key, a syntax error) gives nil, and the caller asks `JSONDecoder`, which then decides alone:
/// it is lax in ways not worth copying (it accepts `{"by":1,}` and reads `1e2` as an Int), so this reader never
/// refuses anything.
enum FlatJSONObject {
    /// What a plain flat object holds under one key.
    enum Member<Value: Equatable>: Equatable {
        case absent
        case null
        case value(Value)
    }

    /// The value of `key` when `bytes` is a flat object of the plain shape holding it once as an integer; nil when
    /// the input is of any other shape, valid or not, or has no such member.
    static func integer(_ key: StaticString, in bytes: [UInt8]) -> Int? {
        guard case .value(let value)? = member(key, in: bytes, as: { $0.plainInteger() }) else { return nil }
        return value
    }

    /// `key`'s member when `bytes` is a flat object of the plain shape and the member, if there, is a plain string or
    /// `null`; nil otherwise.
    static func string(_ key: StaticString, in bytes: [UInt8]) -> Member<String>? {
        member(key, in: bytes) { reader in
            reader.plainString().map { String(decoding: $0, as: UTF8.self) }
        }
    }

    private static func member<Value: Equatable>(
        _ key: StaticString, in bytes: [UInt8], as read: (inout Reader) -> Value?
    ) -> Member<Value>? {
        // `withUTF8Buffer`, not `utf8Start`: a one-letter key may be stored as a scalar, without a pointer.
        key.withUTF8Buffer { wanted in
            bytes.withUnsafeBufferPointer { buffer in
                var reader = Reader(bytes: buffer)
                return reader.member(wanted, as: read)
            }
        }
    }

    private struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        var at = 0

        mutating func member<Value: Equatable>(_ wanted: UnsafeBufferPointer<UInt8>, as read: (inout Reader) -> Value?) -> Member<Value>? {
            skipWhitespace()
            guard take(UInt8(ascii: "{")) else { return nil }
            var found = Member<Value>.absent
            skipWhitespace()
            if take(UInt8(ascii: "}")) {
                skipWhitespace()
                return at == bytes.count ? found : nil
            }
            while true {
                skipWhitespace()
                guard let key = plainString() else { return nil }
                skipWhitespace()
                guard take(UInt8(ascii: ":")) else { return nil }
                skipWhitespace()
                if key.elementsEqual(wanted) {
                    // A second occurrence: JSONDecoder's rule for it is its own business.
                    guard case .absent = found else { return nil }
                    if literal("null") {
                        found = .null
                    } else {
                        guard let value = read(&self) else { return nil }
                        found = .value(value)
                    }
                } else {
                    guard skipScalar() else { return nil }
                }
                skipWhitespace()
                if take(UInt8(ascii: ",")) { continue }
                guard take(UInt8(ascii: "}")) else { return nil }
                skipWhitespace()
                return at == bytes.count ? found : nil
            }
        }

        private mutating func skipWhitespace() {
            while at < bytes.count, bytes[at] == 0x20 || bytes[at] == 0x0A || bytes[at] == 0x0D || bytes[at] == 0x09 { at += 1 }
        }

        private mutating func take(_ byte: UInt8) -> Bool {
            guard at < bytes.count, bytes[at] == byte else { return false }
            at += 1
            return true
        }

        /// A string of printable ASCII without escapes; its bytes between the quotes.
        mutating func plainString() -> UnsafeBufferPointer<UInt8>? {
            guard take(UInt8(ascii: "\"")) else { return nil }
            let start = at
            while at < bytes.count {
                let byte = bytes[at]
                if byte == UInt8(ascii: "\"") {
                    at += 1
                    return UnsafeBufferPointer(rebasing: bytes[start..<at - 1])
                }
                guard byte >= 0x20, byte < 0x80, byte != UInt8(ascii: "\\") else { return nil }
                at += 1
            }
            return nil
        }

        /// `-?(0|[1-9][0-9]*)`, not followed by a fraction or an exponent, within `Int`'s range.
        mutating func plainInteger() -> Int? {
            let negative = take(UInt8(ascii: "-"))
            let start = at
            var magnitude: UInt64 = 0
            while at < bytes.count, let digit = Self.digit(bytes[at]) {
                let (times, overflowTimes) = magnitude.multipliedReportingOverflow(by: 10)
                let (sum, overflowSum) = times.addingReportingOverflow(UInt64(digit))
                guard !overflowTimes, !overflowSum else { return nil }
                magnitude = sum
                at += 1
            }
            let count = at - start
            guard count > 0, count == 1 || bytes[start] != UInt8(ascii: "0") else { return nil }
            if at < bytes.count, bytes[at] == UInt8(ascii: ".") || bytes[at] | 0x20 == UInt8(ascii: "e") { return nil }
            if negative {
                guard magnitude <= UInt64(Int.max) + 1 else { return nil }
                return magnitude == UInt64(Int.max) + 1 ? Int.min : -Int(magnitude)
            }
            guard magnitude <= UInt64(Int.max) else { return nil }
            return Int(magnitude)
        }

        /// Skips a plain string, a number of strict JSON syntax, or a literal.
        private mutating func skipScalar() -> Bool {
            guard at < bytes.count else { return false }
            switch bytes[at] {
            case UInt8(ascii: "\""): return plainString() != nil
            case UInt8(ascii: "t"): return literal("true")
            case UInt8(ascii: "f"): return literal("false")
            case UInt8(ascii: "n"): return literal("null")
            default: return skipNumber()
            }
        }

        private mutating func literal(_ word: StaticString) -> Bool {
            let count = word.utf8CodeUnitCount
            guard bytes.count - at >= count, word.withUTF8Buffer({ $0.elementsEqual(bytes[at..<at + count]) }) else { return false }
            at += count
            return true
        }

        /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`
        private mutating func skipNumber() -> Bool {
            _ = take(UInt8(ascii: "-"))
            let start = at
            guard skipDigits() > 0, at - start == 1 || bytes[start] != UInt8(ascii: "0") else { return false }
            if take(UInt8(ascii: ".")) {
                guard skipDigits() > 0 else { return false }
            }
            if at < bytes.count, bytes[at] | 0x20 == UInt8(ascii: "e") {
                at += 1
                if !take(UInt8(ascii: "+")) { _ = take(UInt8(ascii: "-")) }
                guard skipDigits() > 0 else { return false }
            }
            return true
        }

        private mutating func skipDigits() -> Int {
            let start = at
            while at < bytes.count, Self.digit(bytes[at]) != nil { at += 1 }
            return at - start
        }

        private static func digit(_ byte: UInt8) -> UInt8? {
            byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") ? byte - UInt8(ascii: "0") : nil
        }
    }
}
