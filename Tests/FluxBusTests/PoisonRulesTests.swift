@testable import FluxBus
import FluxBusProtocol
import Testing

/// The rules behind poison actions, one by one: counting crash reports, reading the marker file, which recorded
/// outcomes may be poisoned, and how an answer learns it.
@Suite("Poison action rules")
struct PoisonRulesTests {
    let crash = HandlerCrash(sequence: 7, store: "price", signal: "SIGILL")

    @Test func aProcessReportCountsOnceHoweverManyHELLOsCarryIt() {
        var crashes = HandlerCrashes()
        #expect(crashes.count(crash, worker: "w1", instance: 1)?.count == 1)
        #expect(crashes.count(crash, worker: "w1", instance: 1) == nil, "the same process's second HELLO")
        #expect(crashes.count(crash, worker: "w1", instance: 2)?.count == 2)
        let third = crashes.count(HandlerCrash(sequence: 7, store: "price", signal: "SIGSEGV"), worker: "w2", instance: 9)
        #expect(third?.count == 3)
        #expect(third?.summary == "3 times (SIGILL, SIGSEGV on w1, w2)")
        #expect(crashes.worst(of: "price")?.sequence == 7 && crashes.worst(of: "price")?.count == 3)
        crashes.forget(.init(sequence: 7, store: "price"))
        #expect(crashes.worst(of: "price") == nil)
    }

    @Test func theTallyKeepsAtMostItsLimitDroppingTheOldestSequence() {
        var crashes = HandlerCrashes(limit: 2)
        for sequence in UInt64(1)...3 {
            _ = crashes.count(HandlerCrash(sequence: sequence, store: "s", signal: "SIGILL"), worker: "w", instance: sequence)
        }
        #expect(crashes.tallies.keys.map(\.sequence).sorted() == [2, 3])
    }

    @Test func theMarkerFileParsesOnlyAWholeReport() {
        #expect(HandlerCrashMarker.parse("fluxbus-crash 1\n7\nprice\nSIGILL\n") == crash)
        #expect(HandlerCrashMarker.parse("") == nil, "an empty file: the last process did not die in a handler")
        #expect(HandlerCrashMarker.parse("fluxbus-crash 1\n7\nprice\n") == nil, "cut short")
        #expect(HandlerCrashMarker.parse("fluxbus-crash 2\n7\nprice\nSIGILL\n") == nil, "another format")
        #expect(HandlerCrashMarker.parse("fluxbus-crash 1\n0\nprice\nSIGILL\n") == nil, "sequence 0 is no crash")
        #expect(HandlerCrashMarker.parse("fluxbus-crash 1\nx\nprice\nSIGILL\n") == nil)
    }

    @Test func onlyAnOutcomeNoReplicaGaveMayBePoisoned() {
        #expect(CoordinatorEngine.noReplicaApplied(StoreOutput(store: "s", status: .unknown, message: "no live replica")))
        #expect(CoordinatorEngine.noReplicaApplied(
            StoreOutput(store: "s", status: .ok, message: "lost (worker `w1` silent for 2000 ms); released without output")))
        #expect(!CoordinatorEngine.noReplicaApplied(StoreOutput(store: "s", status: .ok, output: [1])))
        #expect(!CoordinatorEngine.noReplicaApplied(StoreOutput(store: "s", status: .ok)))
        #expect(!CoordinatorEngine.noReplicaApplied(StoreOutput(store: "s", status: .failed, message: "boom")))
        #expect(!CoordinatorEngine.noReplicaApplied(StoreOutput(store: "s", status: .skipped, message: "after a")))
    }

    @Test func anAnswerLearnsThePoisonInPlaceOfItsUnknownOutcomes() {
        let mark = PoisonMark(sequence: 7, store: "price", reason: "poisoned: …")
        let result = Message.result(.init(requestID: "r", epoch: 1, sequence: 7, elapsedMicros: 0, outcomes: [
            Outcome(store: "price", worker: "w1", status: .unknown, message: "silent", digest: 0),
            Outcome(store: "price", worker: "w2", status: .unknown, message: "silent", digest: 0),
            Outcome(store: "city", worker: "w3", status: .ok, digest: 5),
        ]))
        guard case .result(let poisoned) = result.poisoning(mark) else { Issue.record("not a RESULT"); return }
        #expect(poisoned.outcomes.map(\.status) == [.poisoned, .poisoned, .ok])
        #expect(poisoned.outcomes[0].message == mark.reason && poisoned.outcomes[0].worker == "w1")
        // Another sequence's answer is left alone.
        #expect(result.poisoning(PoisonMark(sequence: 8, store: "price", reason: "")) == result)

        let batch = Message.batchResult(.init(
            requestID: "b", epoch: 1, firstSequence: 6, count: 2, elapsedMicros: 0,
            failures: [BatchFailure(sequence: 7, outcome: Outcome(store: "price", worker: "", status: .unknown, digest: 0))],
            outcomes: [Outcome(store: "price", worker: "", status: .unknown, digest: 0)]))
        guard case .batchResult(let poisonedBatch) = batch.poisoning(mark) else { Issue.record("not a BATCH_RESULT"); return }
        #expect(poisonedBatch.failures.map(\.outcome.status) == [.poisoned])
        #expect(poisonedBatch.outcomes.map(\.status) == [.poisoned], "the batch's last action's outcomes")
    }
}
