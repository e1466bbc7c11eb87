/// A W3C trace context (`traceparent`, https://www.w3.org/TR/trace-context/): the form DISPATCH and ACTION carry it
/// in, so that a dispatch's waterfall joins a trace the caller already started (a swift-distributed-tracing span's
/// trace id and span id, injected by a W3C propagator).
///
/// ```swift
/// let context = try TraceContext(parsing: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
/// let fresh = TraceContext.random()   // what `fluxbus dispatch --trace` sends
/// ```
public struct TraceContext: Sendable, Hashable, CustomStringConvertible {
    /// 32 lowercase hex digits, not all zero.
    public let traceID: String
    /// The caller's span: 16 lowercase hex digits, not all zero.
    public let parentID: String
    /// The trace flags (`01`: sampled).
    public let flags: UInt8

    /// Parses a `traceparent` header value, version `00`.
    /// - Throws: ``TraceContext/Invalid`` naming the value and what is wrong with it.
    public init(parsing header: String) throws(Invalid) {
        let parts = header.split(separator: "-", omittingEmptySubsequences: false).map(String.init)
        func fail(_ why: String) -> Invalid {
            Invalid(description: "`\(header)` is not a W3C traceparent (\(why)); give one as "
                + "00-<32 hex trace id>-<16 hex span id>-<2 hex flags>, "
                + "for example 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
        }
        guard parts.count == 4 else { throw fail("it needs 4 parts separated by `-`, not \(parts.count)") }
        guard parts[0] == "00" else { throw fail("version `\(parts[0])` is not 00") }
        guard Self.isHex(parts[1], count: 32), parts[1] != String(repeating: "0", count: 32) else {
            throw fail("the trace id must be 32 lowercase hex digits, not all zero")
        }
        guard Self.isHex(parts[2], count: 16), parts[2] != String(repeating: "0", count: 16) else {
            throw fail("the span id must be 16 lowercase hex digits, not all zero")
        }
        guard Self.isHex(parts[3], count: 2), let flags = UInt8(parts[3], radix: 16) else {
            throw fail("the flags must be 2 lowercase hex digits")
        }
        traceID = parts[1]
        parentID = parts[2]
        self.flags = flags
    }

    /// A context with a new random trace id and span id, sampled.
    public static func random() -> TraceContext {
        var generator = SystemRandomNumberGenerator()
        let header = "00-" + hex(generator.next(), generator.next()) + "-" + hex(generator.next()) + "-01"
        return try! TraceContext(parsing: header)
    }

    /// The `traceparent` header value.
    public var description: String {
        "00-\(traceID)-\(parentID)-" + (flags < 16 ? "0" : "") + String(flags, radix: 16)
    }

    /// Why a `traceparent` was refused, in words a caller can act on.
    public struct Invalid: Error, Sendable, Hashable, CustomStringConvertible {
        public let description: String
    }

    private static func isHex(_ text: String, count: Int) -> Bool {
        text.utf8.count == count && text.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }

    private static func hex(_ words: UInt64...) -> String {
        words.map { word in
            let digits = String(word | 1, radix: 16)
            return String(repeating: "0", count: 16 - digits.count) + digits
        }.joined()
    }
}
