/// A JSON number, kept as the exact decimal value its literal spells: `9007199254740993` stays
/// `9007199254740993`, where a `Double` would make it `9007199254740992`.
///
/// Two numbers are equal when their values are: `1`, `1.0` and `1e0` are the same number. Its canonical text
/// (``description``, and what ``CanonicalJSON`` writes) is the value in ECMAScript's layout, so that a number a
/// double holds exactly is written exactly as it always was, and digests computed before stay valid.
///
/// ```swift
/// let big = JSONNumber("12345678901234567890")!
/// big.description  // "12345678901234567890"
/// big.int64        // nil: it does not fit an Int64
/// ```
public struct JSONNumber: Hashable, Sendable, CustomStringConvertible {
    /// An integer that fits `Int64` is always `.integer`, anything else always `.decimal`: one form per value, so
    /// that synthesized equality is equality of values. `digits` are ASCII, without leading or trailing zeros and
    /// never empty; the value is `±0.DIGITS × 10^point`.
    enum Storage: Hashable, Sendable {
        case integer(Int64)
        case decimal(negative: Bool, digits: [UInt8], point: Int)
    }

    let storage: Storage

    private init(storage: Storage) { self.storage = storage }

    /// An integer, exactly.
    public init(_ value: Int64) { self.init(storage: .integer(value)) }

    /// An integer, exactly.
    public init(_ value: Int) { self.init(storage: .integer(Int64(value))) }

    /// An integer, exactly, including those above `Int64.max`.
    public init(_ value: UInt64) {
        if let small = Int64(exactly: value) {
            self.init(storage: .integer(small))
        } else {
            self.init(negative: false, digits: Array(String(value).utf8), point: String(value).utf8.count)
        }
    }

    /// The number a finite double prints as: the shortest decimal digits that read back as the same double (so
    /// `0.1` is 0.1, and `-0.0` is 0). JSON has no NaN or infinity: passing one is a programming error.
    public init(_ value: Double) {
        precondition(value.isFinite, "JSON has no number \(value)")
        if value == value.rounded(.towardZero), abs(value) < 0x1p53 {
            self.init(storage: .integer(Int64(value)))
            return
        }
        let (digits, point) = CanonicalJSON.shortestDigits(abs(value))
        self.init(negative: value < 0, digits: digits, point: point)
    }

    /// The number a JSON number literal spells, such as `-12.50e3`; nil when `text` is not one, or when its
    /// magnitude is beyond a double's range (see `JSONParser`).
    public init?(_ text: String) {
        // The parser also takes whitespace around a value; a literal starts with `-` or a digit and ends with a digit.
        guard let first = text.utf8.first, first > 0x20, let last = text.utf8.last, last >= UInt8(ascii: "0"),
            last <= UInt8(ascii: "9"), case .number(let number)? = try? JSONParser.parse(Array(text.utf8))
        else { return nil }
        self = number
    }

    /// Normalizes a decimal: drops leading and trailing zeros, and stores an integer that fits `Int64` as one.
    init(negative: Bool, digits: [UInt8], point: Int) {
        var digits = digits[...]
        var point = point
        while digits.first == UInt8(ascii: "0") {
            digits.removeFirst()
            point -= 1
        }
        while digits.last == UInt8(ascii: "0") { digits.removeLast() }
        if digits.isEmpty {
            storage = .integer(0)  // -0 is 0
        } else if point >= digits.count, point <= 19, let integer = Self.int64(digits, point: point, negative: negative) {
            storage = .integer(integer)
        } else {
            storage = .decimal(negative: negative, digits: Array(digits), point: point)
        }
    }

    private static func int64(_ digits: ArraySlice<UInt8>, point: Int, negative: Bool) -> Int64? {
        // Accumulated negatively: Int64.min has no positive counterpart.
        var value: Int64 = 0
        for index in 0..<point {
            let digit = index < digits.count ? Int64(digits[digits.startIndex + index] - UInt8(ascii: "0")) : 0
            let (times, overflowTimes) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflowSum) = times.subtractingReportingOverflow(digit)
            guard !overflowTimes, !overflowSum else { return nil }
            value = sum
        }
        return negative ? value : (value == .min ? nil : -value)
    }

    /// The number as an `Int64`, when it is an integer that fits one.
    public var int64: Int64? {
        if case .integer(let value) = storage { return value }
        return nil
    }

    /// The double nearest to the number: exact when a double can hold it, rounded otherwise.
    public var double: Double {
        switch storage {
        case .integer(let value): Double(value)
        case .decimal: Double(description)!
        }
    }

    /// The canonical text: what ``CanonicalJSON`` writes.
    public var description: String {
        var bytes: [UInt8] = []
        CanonicalJSON.write(self, into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }
}

extension JSONNumber: ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral {
    public init(integerLiteral value: Int64) { self.init(value) }

    /// A float literal is a double first, so this is the number that double prints as.
    public init(floatLiteral value: Double) { self.init(value) }
}
