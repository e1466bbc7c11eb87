import Flux
import FluxBusProtocol
import Testing

@testable import FluxBus

/// The worker engine's owners, alone: the rules the simulator exercises only through whole runs.
@Suite("Worker owners: the dispatch in hand, acknowledgements, catching up")
struct WorkerOwnersTests {
    static func action(_ plan: [PlanStep], sequence: UInt64 = 7) -> Message.Action {
        Message.Action(epoch: 1, sequence: sequence, actionType: "a", payload: Array("{}".utf8), error: nil, plan: plan)
    }

    /// `country` is remote; `city` (here) waits for it, `weather` (here) for nothing.
    static let plan = [PlanStep(store: "country"), PlanStep(store: "city", waitsFor: ["country"]), PlanStep(store: "weather")]

    @Test func aFailedRemoteDependencySkipsItsDependentHereAndIndependentStoresStillRun() {
        var dispatch = LocalDispatch(action: Self.action(Self.plan), at: .zero, hosted: { $0 != "country" })
        let weather = dispatch.nextRunnable()
        #expect(weather?.store == "weather")
        dispatch.record(StoreResult(store: "weather", status: .ok, digest: 0))
        let none = dispatch.nextRunnable()
        #expect(none == nil)
        #expect(!dispatch.isFinished)
        dispatch.learn([StoreOutput(store: "country", status: .failed, message: "no such country")])
        let city = dispatch.nextRunnable()
        #expect(city?.store == "city")
        #expect(city?.blockedBy == "waits for `country`, which failed")
    }

    /// A dependency that runs here still runs here, but the store waiting for it reads the coordinator's outcome: the
    /// coordinator may have written this worker off and decided otherwise for every other replica.
    @Test func aDependentHereReadsTheReleasedOutcomeNotTheLocalOne() {
        var dispatch = LocalDispatch(action: Self.action(Self.plan), at: .zero, hosted: { _ in true })
        let country = dispatch.nextRunnable()
        #expect(country?.store == "country" && country?.blockedBy == nil)
        dispatch.record(StoreResult(store: "country", status: .ok, digest: 0))
        let weather = dispatch.nextRunnable()
        #expect(weather?.store == "weather")
        dispatch.record(StoreResult(store: "weather", status: .ok, digest: 0))
        let waiting = dispatch.nextRunnable()
        #expect(waiting == nil, "city waits for the released outcome of country")
        dispatch.learn([StoreOutput(store: "country", status: .unknown, message: "worker `w1` missed the deadline")])
        let city = dispatch.nextRunnable()
        #expect(city?.blockedBy == "waits for `country`, which was lost")
        dispatch.record(StoreResult(store: "city", status: .skipped, digest: 0))
        #expect(dispatch.isFinished)
    }

    @Test func aReplayRecordsTheStoresMissingFromItsRecordAsLost() {
        var dispatch = LocalDispatch(action: Self.action(Self.plan), at: .zero, hosted: { $0 == "city" })
        dispatch.settleTheRest(as: .lost("not in the recorded history"))
        let city = dispatch.nextRunnable()
        #expect(city?.blockedBy == "waits for `country`, which was lost")
    }

    @Test func aStoreASnapshotCoversWaitsForItsRecordedOutcomeInstead() {
        var dispatch = LocalDispatch(action: Self.action(Self.plan), at: .zero, hosted: { $0 != "weather" })
        dispatch.stopRunning("country")
        let none = dispatch.nextRunnable()
        #expect(none == nil)
        dispatch.learn([StoreOutput(store: "country", status: .ok, output: Array("1".utf8))])
        let city = dispatch.nextRunnable()
        #expect(city?.store == "city" && city?.blockedBy == nil)
        #expect(city.map { dispatch.outputs(for: $0)["country"] != nil } == true)
        dispatch.record(StoreResult(store: "city", status: .ok, digest: 0))
        #expect(dispatch.isFinished)
    }

    @Test func ackMemoryForgetsTheOldestPastItsLimitAndHandsTheNewestToACheckpoint() {
        var memory = AckMemory()
        for sequence in 1...UInt64(AckMemory.limit + 1) {
            memory.remember(sequence, [StoreResult(store: "s", status: .ok, digest: sequence)])
        }
        let unacknowledged = UInt64(AckMemory.limit + 2)
        memory.remember(unacknowledged, [])
        #expect(memory.results(for: 1) == nil)
        #expect(memory.results(for: 2)?.first?.digest == 2)
        #expect(memory.results(for: unacknowledged) == nil)
        #expect(memory.recent(2, through: unacknowledged).map(\.sequence) == [UInt64(AckMemory.limit), UInt64(AckMemory.limit + 1)])
        #expect(memory.recent(2, through: 100).map(\.sequence) == [99, 100])
    }

    @Test func catchingUpKeepsOneFetchOutstandingAndFetchesADispatchInHandTheBusCompleted() {
        var catchUp = CatchUp()
        catchUp.heard(of: 20)
        #expect(catchUp.wanted(applied: 5, inHand: nil, now: .zero, patience: .seconds(1)) == 6...20)
        let soon = MonotonicTime.zero.advanced(by: .milliseconds(999))
        // One FETCH outstanding: until its answer ends, or a second without one.
        let sent = catchUp.mayFetch(through: 20, applied: 5, at: .zero)
        let again = catchUp.mayFetch(through: 20, applied: 5, at: soon)
        // An answer that brought nothing keeps the pacing: no FETCH loop for what has not completed yet.
        catchUp.answerEnded(applied: 5, at: soon)
        let afterNothing = catchUp.mayFetch(through: 20, applied: 5, at: soon)
        let afterPause = catchUp.mayFetch(through: 20, applied: 5, at: .zero.advanced(by: .seconds(1)))
        // One that moved the worker on lets the next go at once.
        catchUp.answerEnded(applied: 12, at: .zero.advanced(by: .seconds(1)))
        let afterProgress = catchUp.mayFetch(through: 20, applied: 12, at: .zero.advanced(by: .seconds(1)))
        #expect(sent && !again && !afterNothing && afterPause && afterProgress)

        let inHand = (sequence: UInt64(21), begunAt: MonotonicTime.zero)
        #expect(catchUp.wanted(applied: 20, inHand: inHand, now: .zero, patience: .seconds(1)) == nil)
        catchUp.heardCompleted(21)
        #expect(catchUp.wanted(applied: 20, inHand: inHand, now: .zero, patience: .seconds(1)) == 21...21)
    }

    @Test func whileAnAnswerArrivesTheNextCompletedWindowIsFetchedAheadOnce() {
        var catchUp = CatchUp()
        let window = CatchUp.defaultWindow
        catchUp.heardCompleted(3 * window)
        let beforeAsking = catchUp.fetchAhead()  // nothing asked yet: nothing to be ahead of
        let asked = catchUp.mayFetch(through: window, applied: 0, at: .zero)
        let soon = MonotonicTime.zero.advanced(by: .milliseconds(10))
        let first = catchUp.fetchAhead()
        let second = catchUp.fetchAhead()  // one ahead at a time
        // The first answer ends: the FETCH sent ahead is the outstanding one, so no other goes at once…
        catchUp.answerEnded(applied: window, at: soon)
        let anotherAtOnce = catchUp.mayFetch(through: 2 * window, applied: window, at: soon)
        // …and its answer arriving sends the window after it, up to what completed.
        let next = catchUp.fetchAhead()
        catchUp.answerEnded(applied: 2 * window, at: soon)
        let beyondCompleted = catchUp.fetchAhead()
        // A FETCH unanswered for a second is forgotten with what was sent ahead of it.
        let later = soon.advanced(by: .seconds(1))
        let overdue = catchUp.fetchOverdue(at: later)
        let afterOverdue = catchUp.fetchAhead()
        #expect(beforeAsking == nil && asked && first == (window + 1)...(2 * window) && second == nil)
        #expect(!anotherAtOnce && next == (2 * window + 1)...(3 * window) && beyondCompleted == nil)
        #expect(overdue && afterOverdue == nil)
    }

    @Test func aFetchWhoseAnswerKeepsArrivingIsNotAskedAgain() {
        var catchUp = CatchUp()
        let window = CatchUp.defaultWindow
        catchUp.heardCompleted(2 * window)
        func at(_ milliseconds: Int) -> MonotonicTime { .zero.advanced(by: .milliseconds(milliseconds)) }
        _ = catchUp.mayFetch(through: window, applied: 0, at: at(0))
        _ = catchUp.fetchAhead()
        // Slow handlers: the window's REPLAYs take longer than `retryAfter` to apply, but keep coming.
        catchUp.answerArriving(at: at(900))
        let whileArriving = catchUp.fetchOverdue(at: at(1_500)) || catchUp.mayFetch(through: window, applied: 10, at: at(1_500))
        // The answer ends late: the FETCH sent ahead waits from then, not from when it was sent.
        catchUp.answerEnded(applied: window, at: at(2_500))
        let aheadAfterTheEnd = catchUp.fetchOverdue(at: at(3_000))
        // Silence for `retryAfter` is what makes a FETCH overdue.
        let silent = catchUp.fetchOverdue(at: at(3_500))
        #expect(!whileArriving && !aheadAfterTheEnd && silent)
    }
}

extension LocalDispatch {
    /// The dispatch of an ACTION, its plan derived afresh: the engine goes through its plan cache instead.
    init(action message: Message.Action, at now: MonotonicTime, hosted: (String) -> Bool) {
        self.init(
            sequence: message.sequence, epoch: message.epoch, actionType: message.actionType, payload: message.payload, error: message.error,
            traceparent: message.traceparent, prepared: PreparedPlan(message.plan, hosted: hosted), at: now)
    }
}
