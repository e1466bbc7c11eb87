import Testing

@testable import Flux

private typealias Step = DependencyExecution.Step

/// Runs every ready step at once: blocked steps are skipped with the blocker's reason, the others end as `outcome`
/// says (ok by default). Returns the stores in the order they were handed out.
private func drain(
    _ execution: inout DependencyExecution,
    outcome: (String) -> DependencyExecution.Settlement = { _ in .ok }
) -> [String] {
    var handedOut: [String] = []
    while let ready = execution.nextRunnable() {
        handedOut.append(ready.store)
        execution.record(ready.store, ready.blockedBy.map { .skipped($0.reason) } ?? outcome(ready.store))
    }
    return handedOut
}

@Suite("Dependency execution")
struct DependencyExecutionTests {
    @Test func theDocumentationExample() {
        var execution = DependencyExecution([
            .init(store: "country"),
            .init(store: "city", waitsFor: ["country"]),
            .init(store: "weather"),
        ])
        while let ready = execution.nextRunnable() {
            if let blocker = ready.blockedBy {
                execution.record(ready.store, .skipped(blocker.reason))
            } else {
                execution.record(ready.store, ready.store == "country" ? .failed("no such country") : .ok)
            }
        }
        #expect(execution.settlement(of: "city") == .skipped("waits for `country`, which failed"))
        #expect(execution.settlement(of: "weather") == .ok)
    }

    @Test func stepsAreHandedOutInDependencyOrderEachOnce() {
        var execution = DependencyExecution([
            Step(store: "country"), Step(store: "city", waitsFor: ["country"]),
            Step(store: "price", waitsFor: ["city"]),
        ])
        let first = execution.nextRunnable()
        #expect(first?.store == "country")
        #expect(first?.index == 0)
        #expect(first?.blockedBy == nil)
        // Handed out, not yet recorded: nothing else is ready, and country is not handed out again.
        let whileCountryRuns = execution.nextRunnable()
        #expect(whileCountryRuns == nil)
        #expect(!execution.isFinished)
        execution.record("country", .ok)
        let rest = drain(&execution)
        #expect(rest == ["city", "price"])
        #expect(execution.isFinished)
        #expect(execution.isSettled)
    }

    @Test func aFailureSkipsItsDependentsTransitivelyAndIndependentStoresStillRun() {
        var execution = DependencyExecution([
            Step(store: "country"), Step(store: "weather"), Step(store: "city", waitsFor: ["country"]),
            Step(store: "price", waitsFor: ["city"]), Step(store: "news", waitsFor: ["weather"]),
        ])
        let order = drain(&execution) { $0 == "country" ? .failed("no such country") : .ok }
        #expect(order == ["country", "weather", "city", "price", "news"])
        #expect(execution.settlement(of: "country") == .failed("no such country"))
        #expect(execution.settlement(of: "city") == .skipped("waits for `country`, which failed"))
        #expect(execution.settlement(of: "price") == .skipped("waits for `city`, which was skipped"))
        #expect(execution.settlement(of: "weather") == .ok)
        #expect(execution.settlement(of: "news") == .ok)
    }

    @Test func theBlockerIsTheFirstStoppingDependencyInWaitsForOrder() {
        var execution = DependencyExecution([
            Step(store: "a"), Step(store: "b"), Step(store: "c"), Step(store: "report", waitsFor: ["a", "c", "b"]),
        ])
        _ = drain(&execution) { $0 == "a" ? .ok : .failed("\($0) broke") }
        #expect(execution.settlement(of: "report") == .skipped("waits for `c`, which failed"))
    }

    @Test func remoteOutcomesMayArriveInAnyOrder() {
        // This process runs city and report; country and weather run elsewhere.
        var execution = DependencyExecution(
            [
                Step(store: "country"), Step(store: "weather"), Step(store: "city", waitsFor: ["country"]),
                Step(store: "report", waitsFor: ["city", "weather"]),
            ],
            runsHere: { $0 == "city" || $0 == "report" })
        let beforeAnyRecord = execution.nextRunnable()
        #expect(beforeAnyRecord == nil)
        execution.record("weather", .failed("sensor down"))
        let beforeCountry = execution.nextRunnable()  // city still waits for country
        #expect(beforeCountry == nil)
        execution.record("country", .ok)
        let city = execution.nextRunnable()
        #expect(city?.store == "city")
        #expect(city?.blockedBy == nil)
        execution.record("city", .ok)
        let report = execution.nextRunnable()
        #expect(report?.index == 3)
        #expect(report?.blockedBy?.dependency == "weather")
        #expect(report?.blockedBy?.settlement == .failed("sensor down"))
        execution.record("report", .skipped(report!.blockedBy!.reason))
        #expect(execution.isFinished)
        #expect(execution.isSettled)
    }

    @Test func remoteStoresAreNeverHandedOutAndLocalOnesFinishWithoutThem() {
        var execution = DependencyExecution(
            [Step(store: "remote"), Step(store: "local"), Step(store: "late", waitsFor: ["local"])],
            runsHere: { $0 != "remote" })
        let handedOut = drain(&execution)
        #expect(handedOut == ["local", "late"])
        #expect(execution.isFinished)
        #expect(!execution.isSettled)
        execution.record("remote", .ok)
        #expect(execution.isSettled)
    }

    /// On the bus a lost dependency skips its dependents like a failure (the coordinator's `--lost-dependency run`
    /// releases it as ok instead, so workers never see it lost).
    @Test func aLostDependencySkipsItsDependents() {
        var execution = DependencyExecution(
            [Step(store: "country"), Step(store: "city", waitsFor: ["country"])], runsHere: { $0 == "city" })
        execution.record("country", .lost("no live replica"))
        let city = execution.nextRunnable()
        #expect(city?.blockedBy?.reason == "waits for `country`, which was lost")
    }

    /// A store that stops running here (a snapshot brought it past the dispatch) is no longer handed out: it settles
    /// from outside like a remote store, and its dependents wait for that.
    @Test func aStoreThatStopsRunningHereSettlesFromOutside() {
        var execution = DependencyExecution([Step(store: "a"), Step(store: "b", waitsFor: ["a"])])
        execution.stopRunningHere("a")
        let none = execution.nextRunnable()
        #expect(none == nil, "b waits for a, which no longer runs here")
        #expect(!execution.isFinished)
        execution.record("a", .ok)
        let b = execution.nextRunnable()
        #expect(b?.store == "b" && b?.blockedBy == nil)
        execution.record("b", .ok)
        #expect(execution.isFinished && execution.isSettled)
    }

    @Test func aStoreNotInThePlanIsNotWaitedFor() {
        // As in the coordinator's plans and the hub: "country" does not take part in this dispatch.
        var execution = DependencyExecution([Step(store: "city", waitsFor: ["country"]), Step(store: "other")])
        let city = execution.nextRunnable()
        #expect(city?.store == "city")
        #expect(city?.blockedBy == nil)
        #expect(city?.step.waitsFor == ["country"])
        execution.record("city", .ok)
        let rest = drain(&execution)
        #expect(rest == ["other"])
    }

    @Test func theFirstRecordCountsAndStrangersAreIgnored() {
        var execution = DependencyExecution(
            [Step(store: "a"), Step(store: "b", waitsFor: ["a"])], runsHere: { $0 == "b" })
        let first = execution.record("a", .ok)
        #expect(first)
        let duplicate = execution.record("a", .failed("late duplicate"))
        #expect(!duplicate)
        let stranger = execution.record("nobody", .ok)
        #expect(!stranger)
        #expect(execution.settlement(of: "a") == .ok)
        #expect(execution.settlement(of: "nobody") == nil)
        let b = execution.nextRunnable()
        #expect(b?.blockedBy == nil)
    }

    @Test func aStepRecordedBeforeItIsHandedOutIsNotHandedOut() {
        // A worker catching up learns a hosted store's recorded outcome instead of running it.
        var execution = DependencyExecution([Step(store: "a"), Step(store: "b", waitsFor: ["a"])])
        execution.record("a", .lost("not in the recorded history"))
        let next = execution.nextRunnable()
        #expect(next?.store == "b")
        #expect(next?.blockedBy?.reason == "waits for `a`, which was lost")
    }

    @Test func anEmptyPlanIsFinishedAtOnce() {
        var execution = DependencyExecution([])
        let none = execution.nextRunnable()
        #expect(none == nil)
        #expect(execution.isFinished && execution.isSettled)
    }

    @Test func replicasMergeFailedThenSkippedThenOkThenLost() {
        typealias S = DependencyExecution.Settlement
        #expect(S.merging([]) == nil)
        #expect(S.merging([.ok, .lost("gone"), .skipped("s1"), .failed("f1"), .failed("f2")]) == .failed("f1"))
        #expect(S.merging([.ok, .skipped("s1"), .skipped("s2")]) == .skipped("s1"))
        #expect(S.merging([.lost("gone"), .ok]) == .ok)
        #expect(S.merging([.lost("first"), .lost("second")]) == .lost("first"))
        #expect(S.failed("f").message == "f" && S.ok.message == nil)
    }
}

// MARK: - The hub on the executor

private let goAction = ActionType<Bool>("go")  // the payload says whether `first` fails
private let otherAction = ActionType<NoPayload>("other")

private final class FirstStore: Store {
    static let name = "first"
    static let handlers = Handlers<FirstStore>().on(goAction) { store, action, _ in
        if action.payload { throw ActionError("first refused") }
        store.state += 1
    }
    var state = 0
}

private final class SecondStore: Store {
    static let name = "second"
    static let dependencies = ["first"]
    static let handlers = Handlers<SecondStore>().on(goAction) { store, _, _ in store.state += 1 }
    var state = 0
}

private final class ThirdStore: Store {
    static let name = "third"
    static let dependencies = ["second"]
    static let handlers = Handlers<ThirdStore>().on(goAction) { store, _, _ in store.state += 1 }
    var state = 0
}

private final class SoloStore: Store {
    static let name = "solo"
    static let handlers = Handlers<SoloStore>().on(goAction) { store, _, _ in store.state += 1 }
    var state = 0
}

/// Takes no part in `go`.
private final class IdleStore: Store {
    static let name = "idle"
    static let handlers = Handlers<IdleStore>().on(otherAction) { store, _, _ in store.state += 1 }
    var state = 0
}

private final class ReaderStore: Store {
    static let name = "reader"
    static let dependencies = ["idle"]
    static let handlers = Handlers<ReaderStore>().on(goAction) { store, _, _ in store.state += 1 }
    var state = 0
}

@Suite("Hub dependency order")
struct HubDependencyOrderTests {
    @Test func aFailureSkipsTheChainAndTheRestRuns() throws {
        let hub = Hub()
        try hub.register([
            ThirdStore.self, SecondStore.self, FirstStore.self, SoloStore.self, IdleStore.self, ReaderStore.self,
        ])
        let report = try hub.dispatch(Action(goAction, true))
        #expect(report.outcomes.map(\.store) == ["first", "second", "third", "solo", "reader"])
        #expect(report["first"] == .failed("first refused"))
        #expect(report["second"] == .skipped("waits for `first`, which failed"))
        #expect(report["third"] == .skipped("waits for `second`, which was skipped"))
        #expect(report["solo"] == .ok)
        // `idle` does not handle `go`, so `reader` does not wait for it.
        #expect(report["reader"] == .ok)
        #expect(report["idle"] == nil)
        #expect(hub.store(of: ThirdStore.self)?.state == 0)
        #expect(hub.store(of: SoloStore.self)?.state == 1)

        #expect(try hub.dispatch(Action(goAction, false)).succeeded)
        #expect(hub.store(of: ThirdStore.self)?.state == 1)
    }
}
