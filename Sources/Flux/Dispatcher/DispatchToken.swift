/// Identifies one callback registered with a ``Dispatcher``: `ID_1`, `ID_2`, and so on.
///
/// Tokens are handed out in registration order and never reused by the dispatcher that made them. Any text makes a
/// token, as in Flux, where ids are plain strings; a token that names no registered callback is reported by
/// ``Dispatcher/waitFor(_:)`` and ``Dispatcher/unregister(_:)`` as ``FluxError/unknownToken(_:)``.
///
/// ```swift
/// let token = dispatcher.register { payload in print(payload) }
/// print(token)                               // ID_1
/// let same = DispatchToken(rawValue: "ID_1") // equal to `token`
/// ```
public struct DispatchToken: RawRepresentable, Hashable, Sendable, CustomStringConvertible,
    ExpressibleByStringLiteral
{
    /// The token's text, for example `ID_3`.
    public let rawValue: String

    /// The registration number parsed from `ID_n`, or nil for text of another shape. Derived from `rawValue`, so it
    /// takes no part in equality; it lets the dispatcher find a slot without string work.
    @usableFromInline let number: Int?

    /// Builds a token from its text.
    public init(rawValue: String) {
        self.rawValue = rawValue
        self.number = Self.parseNumber(rawValue)
    }

    /// Builds a token from a string literal, as in `try dispatcher.waitFor(["ID_1"])`.
    public init(stringLiteral value: String) {
        self.init(rawValue: value)
    }

    @usableFromInline init(number: Int) {
        self.rawValue = Self.prefix + String(number)
        self.number = number
    }

    public var description: String { rawValue }

    public static func == (lhs: DispatchToken, rhs: DispatchToken) -> Bool { lhs.rawValue == rhs.rawValue }
    public func hash(into hasher: inout Hasher) { hasher.combine(rawValue) }

    static let prefix = "ID_"

    private static func parseNumber(_ text: String) -> Int? {
        guard text.hasPrefix(prefix) else { return nil }
        let digits = text.dropFirst(prefix.count)
        // "ID_01" is not the token "ID_1": only the canonical spelling maps to a slot.
        guard let first = digits.first, first != "0" || digits.count == 1 else { return nil }
        return Int(digits)
    }
}
