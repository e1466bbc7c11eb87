import Testing

@testable import FluxBus

/// The rules behind "one worker id, one process" (docs/PROTOCOL.md, Joins), without sockets.
@Suite("Worker id claims and routing ids")
struct WorkerIDClaimsTests {
    static func at(_ milliseconds: Int64) -> MonotonicTime { MonotonicTime.zero.advanced(by: .milliseconds(milliseconds)) }

    /// A claim is answered `retry` until it is older than the patience, counted from its first HELLO; another
    /// instance starts its own count, and an accepted join or a stall forgets claims.
    @Test func aClaimTurnsFinalOnlyAfterThePatience() {
        var claims = WorkerIDClaims()
        let patience = Duration.milliseconds(2_500)
        #expect(claims.claim("w1", by: 7, at: Self.at(0), patience: patience) == .retry)
        #expect(claims.isClaimed("w1"))
        #expect(claims.claim("w1", by: 7, at: Self.at(2_500), patience: patience) == .retry)
        #expect(claims.claim("w1", by: 7, at: Self.at(2_501), patience: patience) == .refuse)
        #expect(claims.claim("w1", by: 8, at: Self.at(3_000), patience: patience) == .retry, "another instance")
        claims.forgetClaims()
        #expect(claims.claim("w1", by: 8, at: Self.at(6_000), patience: patience) == .retry, "forgotten at a stall")
        claims.accepted("w1", address: "127.0.0.1")
        #expect(!claims.isClaimed("w1"))
        #expect(claims.describeAddress(of: "w1") == "address 127.0.0.1")
    }

    @Test func addressesAreShownAsTheTransportGivesThem() {
        #expect(WorkerIDClaims.describe(address: "10.0.0.7") == "address 10.0.0.7")
        #expect(WorkerIDClaims.describe(address: "localhost:1000:1000:4242") == "process id 4242 on this host (ipc://, uid 1000)")
        #expect(WorkerIDClaims.describe(address: nil).contains("does not report"))
    }

    /// A worker's routing id is its id, `/`, and its instance in hex; the coordinator accepts that or the bare id.
    @Test func aRoutingIDBelongsToItsWorkerIDAlone() {
        let routingID = WorkerRoutingID.make("w1", instance: 0x5eed)
        #expect(routingID == Array("w1/5eed".utf8))
        #expect(WorkerRoutingID.belongs(routingID, to: "w1"))
        #expect(WorkerRoutingID.belongs(Array("w1".utf8), to: "w1"))
        #expect(!WorkerRoutingID.belongs(routingID, to: "w"))
        #expect(!WorkerRoutingID.belongs(Array("w1/".utf8), to: "w1"))
        #expect(!WorkerRoutingID.belongs(Array("w12".utf8), to: "w1"))
    }
}
