import FluxBusProtocol
import Testing

@testable import FluxBus

/// A late report fills in exactly the unknown entry it is about: its own replica's, or the store's "no live
/// replica"; never another replica's, and never a second entry for a replica already reported.
@Suite struct UnknownOutcomesTests {
    static func outcome(_ store: String, _ worker: String, _ status: OutcomeStatus) -> Outcome {
        Outcome(store: store, worker: worker, status: status, message: status == .unknown ? "missed the deadline" : "", digest: 0)
    }

    @Test func aReplicaAlreadyReportedDoesNotStandInForAnother() {
        var unknown = UnknownOutcomes()
        let answer = Message.result(.init(requestID: "r", epoch: 1, sequence: 7, elapsedMicros: 0, outcomes: [
            Self.outcome("tally", "w1", .unknown), Self.outcome("tally", "w3", .ok),
        ]))
        unknown.remember(answer, requestID: "r")
        // w3 reports again (a late or repeated ACK): nothing of w1's is touched.
        #expect(unknown.resolve(sequence: 7, store: "tally", worker: "w3") == nil)
        #expect(unknown.count == 1)
        // w1's own report fills in w1's entry, in place.
        #expect(unknown.resolve(sequence: 7, store: "tally", worker: "w1") == "r")
        guard case .result(let resolved) = answer.resolving(sequence: 7, with: Self.outcome("tally", "w1", .ok)) else {
            Issue.record("not a RESULT")
            return
        }
        #expect(resolved.outcomes == [Self.outcome("tally", "w1", .ok), Self.outcome("tally", "w3", .ok)])
        // A report for a replica with no unknown entry never adds a second entry for it.
        guard case .result(let again) = Message.result(resolved).resolving(sequence: 7, with: Self.outcome("tally", "w3", .failed)) else { return }
        #expect(again.outcomes == resolved.outcomes)
    }

    @Test func eachUnknownReplicaIsFilledInByItsOwnReport() {
        var unknown = UnknownOutcomes()
        let answer = Message.result(.init(requestID: "r", epoch: 1, sequence: 3, elapsedMicros: 0, outcomes: [
            Self.outcome("audit", "w3", .unknown), Self.outcome("audit", "w4", .unknown),
        ]))
        unknown.remember(answer, requestID: "r")
        #expect(unknown.resolve(sequence: 3, store: "audit", worker: "w4") == "r")
        #expect(unknown.resolve(sequence: 3, store: "audit", worker: "w3") == "r", "the second replica's entry is still remembered")
        #expect(unknown.count == 0)
    }

    @Test func noLiveReplicaIsFilledInByAnyReplica() {
        var unknown = UnknownOutcomes()
        let answer = Message.result(.init(requestID: "r", epoch: 1, sequence: 5, elapsedMicros: 0, outcomes: [
            Outcome(store: "kv", worker: "", status: .unknown, message: "no live replica", digest: 0),
        ]))
        unknown.remember(answer, requestID: "r")
        #expect(unknown.resolve(sequence: 5, store: "kv", worker: "w9") == "r")
        guard case .result(let resolved) = answer.resolving(sequence: 5, with: Self.outcome("kv", "w9", .ok)) else { return }
        #expect(resolved.outcomes == [Self.outcome("kv", "w9", .ok)])
    }
}
