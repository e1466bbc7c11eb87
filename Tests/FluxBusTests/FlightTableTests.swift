import FluxBusProtocol
import Testing

@testable import FluxBus

/// The coordinator's table of requests in flight, alone: requests answered in order, and dispatches still found by
/// sequence after the completed front of the table was dropped.
@Suite("FlightTable")
struct FlightTableTests {
    /// A dispatch with an empty plan: complete as soon as it is in flight.
    static func flight(_ sequence: UInt64) -> InFlightDispatch {
        InFlightDispatch(
            action: .init(epoch: 1, sequence: sequence, actionType: "t", payload: [], error: nil, plan: [], traceparent: ""),
            startedAt: .zero, deadline: .zero, awaiting: [], notReady: [], nextResend: .zero, resendGap: .seconds(1))
    }

    static func request(_ id: String, count: Int) -> CurrentRequest {
        CurrentRequest(
            requestID: id, requesters: [Requester(routingID: Array(id.utf8), requestID: id)], isBatch: true,
            firstSequence: 0, count: count, fingerprint: nil, actionType: "t", startedAt: .zero)
    }

    /// Five requests of 500 dispatches: answering the third drops the 1,500 completed dispatches in front of the
    /// fourth (more than 1,024, and more than half the table), and the two left still end, and are found, where they
    /// should.
    @Test func requestsAreAnsweredInOrderAcrossADropOfTheCompletedFront() {
        var table = FlightTable()
        var sequence: UInt64 = 0
        for id in ["r0", "r1", "r2", "r3", "r4"] {
            #expect(table.admits(500, limit: 4_096))
            table.begin(Self.request(id, count: 500))
            for _ in 0..<500 {
                sequence += 1
                table.append(Self.flight(sequence))
            }
        }
        #expect(!table.admits(1_700, limit: 4_096), "2,500 in flight and 1,700 more exceed the window")
        var answered: [String] = []
        var answeredAt: [UInt64] = []
        var mismatches: [UInt64] = []
        while let done = table.takeCompletedHead() {
            while let request = table.finishOldest() {
                answered.append(request.requestID)
                answeredAt.append(done.sequence)
            }
            if answered == ["r0", "r1", "r2"], table.request("r4")?.requesters.count == 1 {
                // A retry of the last request, once the first three went: it is found under its id still.
                #expect(table.addRequester(Requester(routingID: [9], requestID: "r4"), maximum: 4) == .joined)
                #expect(table.request("r4")?.requesters.count == 2)
            }
            // The next dispatch in flight is where the table says it is, whatever was dropped before it.
            if let head = table.head, table[head].sequence != done.sequence + 1 || table.index(of: done.sequence + 1) != head {
                mismatches.append(done.sequence)
            }
        }
        #expect(answered == ["r0", "r1", "r2", "r3", "r4"])
        #expect(answeredAt == [500, 1_000, 1_500, 2_000, 2_500], "each answered as its last dispatch completed")
        #expect(mismatches.isEmpty, "dispatches not found by sequence after: \(mismatches.prefix(5))")
        #expect(table.isIdle && table.request("r4") == nil)
    }
}
