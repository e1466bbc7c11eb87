import Testing

@testable import FluxBus

/// The rules behind "one worker id, one process" (docs/PROTOCOL.md, Joins), without sockets.
@Suite("Worker id claims and routing ids")
struct WorkerIDClaimsTests {
    static func at(_ milliseconds: Int64) -> MonotonicTime { MonotonicTime.zero.advanced(by: .milliseconds(milliseconds)) }

    /// A claim is answered `retry` until it is older than the patience, counted from its first HELLO, and then only
    /// refused while the holder keeps talking; another instance starts its own count, and an accepted join or a stall
    /// forgets claims.
    @Test func aClaimTurnsFinalOnlyAfterThePatience() {
        var claims = WorkerIDClaims()
        let patience = Duration.milliseconds(2_500)
        #expect(claims.claim("w1", by: 7, at: Self.at(0), patience: patience, holderHeard: Self.at(0)) == .retry)
        #expect(claims.isClaimed("w1"))
        #expect(claims.claim("w1", by: 7, at: Self.at(2_500), patience: patience, holderHeard: Self.at(2_400)) == .retry)
        #expect(claims.claim("w1", by: 7, at: Self.at(2_501), patience: patience, holderHeard: Self.at(2_400)) == .refuse)
        #expect(claims.claim("w1", by: 8, at: Self.at(3_000), patience: patience, holderHeard: Self.at(2_900)) == .retry, "another instance")
        claims.forgetClaims()
        #expect(claims.claim("w1", by: 8, at: Self.at(6_000), patience: patience, holderHeard: Self.at(5_900)) == .retry, "forgotten at a stall")
        claims.accepted("w1", address: "127.0.0.1")
        #expect(!claims.isClaimed("w1"))
        #expect(claims.describeAddress(of: "w1") == "address 127.0.0.1")
    }

    /// A holder silent since the claim began, or for longer than the patience, has not proved itself alive: the claim
    /// stays retryable until its registration lapses.
    @Test func aSilentHolderNeverMakesAClaimFinal() {
        var claims = WorkerIDClaims()
        let patience = Duration.milliseconds(500)
        #expect(claims.claim("w4", by: 2, at: Self.at(1_000), patience: patience, holderHeard: Self.at(900)) == .retry)
        #expect(claims.claim("w4", by: 2, at: Self.at(2_000), patience: patience, holderHeard: Self.at(900)) == .retry,
                "not heard since the claim began")
        #expect(claims.claim("w4", by: 2, at: Self.at(2_000), patience: patience, holderHeard: Self.at(1_200)) == .retry,
                "heard since, but not within the patience")
        #expect(claims.claim("w4", by: 2, at: Self.at(2_000), patience: patience, holderHeard: Self.at(1_900)) == .refuse)
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
