import FluxBusProtocol
import Testing

@testable import FluxBus

/// A DISPATCH whose `traceparent` is neither empty nor a W3C traceparent is refused with ERROR 2 naming it, and
/// nothing is dispatched: a client that skipped `TraceContext`'s check learns what to fix.
@Suite("A malformed traceparent on the wire", .timeLimit(.minutes(1)))
struct TraceparentRefusalTests {
    @Test func isRefusedWithInvalidRequestNamingIt() async throws {
        let bus = try await TestBus()
        let client = try await bus.client()
        let dispatch = Message.dispatch(.init(
            requestID: "traced-1", actionType: "counter.add", payload: Array(#"{"by":1}"#.utf8), traceparent: "00-nope"))
        let answer = try await RawPeerTests.exchange(dispatch, routingID: nil, on: bus)
        guard case .error(let error) = answer else {
            Issue.record("expected ERROR, got \(String(describing: answer))")
            await client.close()
            await bus.stop()
            return
        }
        #expect(error.requestID == "traced-1" && error.code == .invalidRequest)
        #expect(error.message.contains("`00-nope` is not a W3C traceparent"), "\(error.message)")
        #expect(try await client.status().sequence == 0, "nothing was dispatched")
        await client.close()
        await bus.stop()
    }
}
