import FluxBusProtocol
import Testing

@testable import FluxBus

/// What a worker holds of the STATEs it sends (docs/PROTOCOL.md, "Transfers"): bounded in number and in idle time.
@Suite("State transfers a worker holds")
struct StateTransfersTests {
    static let start = MonotonicTime(nanoseconds: 0)

    static func pull(_ transfer: String, _ offset: UInt64, _ count: UInt32) -> Message.Pull {
        Message.Pull(transfer: transfer, offset: offset, maxBytes: count)
    }

    @Test func aPullGetsExactlyItsBytesAndTheLastOneReleasesTheTransfer() {
        var transfers = StateTransfers()
        #expect(transfers.hold("q1", Array(0..<10), at: Self.start).isEmpty)
        #expect(transfers.serve(Self.pull("q1", 3, 4), at: Self.start).map(Array.init) == [3, 4, 5, 6])
        #expect(transfers.serve(Self.pull("q1", 7, 4), at: Self.start).map(Array.init) == [7, 8, 9])
        #expect(transfers.serve(Self.pull("q1", 0, 4), at: Self.start) == nil, "released after its last chunk")
        #expect(transfers.heldCount == 0)
    }

    @Test func pastFourTheTransferTouchedLongestAgoIsDropped() {
        var transfers = StateTransfers()
        for index in 1...4 {
            _ = transfers.hold("q\(index)", [1, 2, 3], at: Self.start.advanced(by: .seconds(index)))
        }
        _ = transfers.serve(Self.pull("q1", 0, 1), at: Self.start.advanced(by: .seconds(10)))
        #expect(transfers.hold("q5", [1, 2, 3], at: Self.start.advanced(by: .seconds(11))) == ["q2"])
        #expect(transfers.heldCount == StateTransfers.maxHeld)
        #expect(transfers.serve(Self.pull("q2", 0, 1), at: Self.start.advanced(by: .seconds(12))) == nil)
    }

    @Test func aTransferNobodyPullsExpires() {
        var transfers = StateTransfers()
        _ = transfers.hold("q1", [1, 2, 3], at: Self.start)
        _ = transfers.hold("q2", [1, 2, 3], at: Self.start.advanced(by: .seconds(20)))
        #expect(transfers.expire(at: Self.start.advanced(by: StateTransfers.idleLimit)) == ["q1"])
        #expect(transfers.heldCount == 1)
    }
}
