import FluxBus
import FluxBusProtocol
import Testing

/// ``DispatchResult/succeeded`` answers "every replica ok" without building the store summaries; for every other mix
/// of outcomes it must still say what the summaries say.
@Suite("DispatchResult.succeeded")
struct DispatchResultSucceededTests {
    /// Every assignment of statuses to three replicas: two of `a`, one of `b`.
    static let mixes: [[OutcomeStatus]] = OutcomeStatus.allCases.flatMap { first in
        OutcomeStatus.allCases.flatMap { second in OutcomeStatus.allCases.map { [first, second, $0] } }
    }

    static func result(_ statuses: [OutcomeStatus]) -> DispatchResult {
        let stores = ["a", "a", "b"]
        let outcomes = zip(stores, statuses).enumerated().map { index, pair in
            Outcome(store: pair.0, worker: "w\(index)", status: pair.1, message: pair.1 == .ok ? "" : "why", digest: 0)
        }
        return DispatchResult(.init(requestID: "r", epoch: 1, sequence: 1, elapsedMicros: 1, outcomes: outcomes))
    }

    @Test(arguments: mixes)
    func agreesWithTheStoreSummaries(_ statuses: [OutcomeStatus]) {
        let result = Self.result(statuses)
        #expect(result.succeeded == result.stores.allSatisfy { $0.status == .ok }, "\(statuses)")
    }

    @Test func everyReplicaOkSucceedsAndAReplicaUnheardFromDoesNotSpoilIt() {
        #expect(Self.result([.ok, .ok, .ok]).succeeded)
        #expect(Self.result([.ok, .unknown, .ok]).succeeded, "a store with one ok replica and none failed is ok")
        #expect(!Self.result([.ok, .failed, .ok]).succeeded)
        #expect(!Self.result([.ok, .ok, .unknown]).succeeded, "a store none of whose replicas answered is unknown")
    }

    @Test func aDispatchNoStoreHandledDidNotSucceed() {
        let result = DispatchResult(.init(requestID: "r", epoch: 1, sequence: 1, elapsedMicros: 1, outcomes: []))
        #expect(!result.succeeded && result.isUnhandled)
    }
}
