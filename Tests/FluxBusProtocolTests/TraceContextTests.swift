import FluxBusProtocol
import Testing

/// The W3C `traceparent` a traced DISPATCH carries: what is accepted, what is refused and why.
@Suite("Trace context")
struct TraceContextTests {
    @Test func aValidHeaderRoundTrips() throws {
        let header = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
        let context = try TraceContext(parsing: header)
        #expect(context.traceID == "4bf92f3577b34da6a3ce929d0e0e4736")
        #expect(context.parentID == "00f067aa0ba902b7")
        #expect(context.flags == 1)
        #expect(context.description == header)
    }

    @Test func aRandomContextIsValidAndNew() throws {
        let first = TraceContext.random(), second = TraceContext.random()
        #expect(try TraceContext(parsing: first.description) == first)
        #expect(first.traceID != second.traceID)
        #expect(first.description.utf8.count == 55)
    }

    @Test(arguments: [
        ("", "4 parts"),
        ("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "version `01`"),
        ("00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", "trace id"),
        ("00-00000000000000000000000000000000-00f067aa0ba902b7-01", "trace id"),
        ("00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", "span id"),
        ("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-1", "flags"),
    ])
    func aMalformedHeaderIsRefusedNamingIt(header: String, why: String) {
        #expect {
            try TraceContext(parsing: header)
        } throws: { error in
            let text = "\(error)"
            return text.contains("`\(header)` is not a W3C traceparent") && text.contains(why) && text.contains("for example 00-")
        }
    }
}
