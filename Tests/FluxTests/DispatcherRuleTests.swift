import Testing

@testable import Flux

/// One test (or more) for every rule of DESIGN.md §4, beyond Facebook's own suite.
@Suite("Dispatcher: the rules of DESIGN §4")
struct DispatcherRuleTests {
    let dispatcher = Dispatcher<Int>()

    // MARK: Tokens

    @Test func tokensCountFromOneAndAreNeverReused() throws {
        let first = dispatcher.register { _ in }
        let second = dispatcher.register { _ in }
        try dispatcher.unregister(second)
        let third = dispatcher.register { _ in }
        #expect([first, second, third].map(\.rawValue) == ["ID_1", "ID_2", "ID_3"])
        #expect(third.description == "ID_3")
    }

    @Test func tokenBuiltFromTextEqualsTheIssuedOne() throws {
        var calls = 0
        dispatcher.register { _ in calls += 1 }
        let rebuilt = DispatchToken(rawValue: "ID_1")
        #expect(rebuilt == DispatchToken(rawValue: "ID_1"))
        #expect(rebuilt.hashValue == DispatchToken(rawValue: "ID_1").hashValue)
        try dispatcher.unregister(rebuilt)
        try dispatcher.dispatch(0)
        #expect(calls == 0)
    }

    @Test func eachDispatcherCountsItsOwnTokens() {
        let other = Dispatcher<String>()
        _ = other.register { _ in }
        #expect(dispatcher.register { _ in }.rawValue == "ID_1")
    }

    @Test("non-canonical spellings map to no callback", arguments: ["ID_01", "id_1", "ID_", "ID_-1", "1", ""])
    func nonCanonicalTokensAreUnknown(text: String) {
        dispatcher.register { _ in }
        let token = DispatchToken(rawValue: text)
        #expect(throws: FluxError.unknownToken(token)) { try dispatcher.unregister(token) }
    }

    // MARK: Order

    @Test func callbacksRunInRegistrationOrderExactlyOnceWithTheSamePayload() throws {
        var seen: [(Int, Int)] = []
        for index in 0..<11 { dispatcher.register { seen.append((index, $0)) } }
        try dispatcher.dispatch(42)
        #expect(seen.map(\.0) == Array(0..<11))
        #expect(seen.allSatisfy { $0.1 == 42 })
    }

    @Test func manyCallbacksKeepTheirOrderThroughGrowthAndRemoval() throws {
        var seen: [Int] = []
        let tokens = (0..<100).map { index in dispatcher.register { _ in seen.append(index) } }
        for index in stride(from: 0, to: 100, by: 3) { try dispatcher.unregister(tokens[index]) }
        // Remove more during a dispatch: the ones not yet run are skipped, and compacted away afterwards.
        dispatcher.register { [dispatcher] _ in
            for index in stride(from: 1, to: 100, by: 3) where index > 50 { try? dispatcher.unregister(tokens[index]) }
        }
        try dispatcher.dispatch(0)
        let survivors = (0..<100).filter { $0 % 3 != 0 }
        #expect(seen == survivors)
        seen = []
        try dispatcher.dispatch(0)
        #expect(seen == survivors.filter { $0 % 3 != 1 || $0 < 50 })
        #expect(throws: FluxError.unknownToken(tokens[52])) { try dispatcher.unregister(tokens[52]) }
        try dispatcher.unregister(tokens[98])
    }

    @Test func waitedForCallbackRunsOnceEvenWhenItsTurnComes() throws {
        var order: [String] = []
        var tokenC: DispatchToken!
        dispatcher.register { [dispatcher] _ in
            try dispatcher.waitFor([tokenC])
            order.append("A")
        }
        dispatcher.register { _ in order.append("B") }
        tokenC = dispatcher.register { _ in order.append("C") }
        try dispatcher.dispatch(1)
        #expect(order == ["C", "A", "B"])
    }

    // MARK: Errors and their text

    @Test func errorDescriptionsCarryFluxText() {
        let token = DispatchToken(rawValue: "ID_7")
        #expect(FluxError.dispatchInProgress.description == "Cannot dispatch in the middle of a dispatch.")
        #expect(FluxError.notDispatching.description == "Must be invoked while dispatching.")
        #expect(
            FluxError.circularDependency(token).description
                == "Circular dependency detected while waiting for `ID_7`.")
        #expect(FluxError.unknownToken(token).description == "`ID_7` does not map to a registered callback.")
        #expect(FluxError.unknownToken(token) != FluxError.unknownToken("ID_8"))
    }

    @Test func unregisteringAnUnknownTokenThrows() throws {
        let token = dispatcher.register { _ in }
        try dispatcher.unregister(token)
        #expect(throws: FluxError.unknownToken(token)) { try dispatcher.unregister(token) }
        #expect(throws: FluxError.unknownToken("ID_99")) { try dispatcher.unregister("ID_99") }
    }

    // MARK: waitFor

    @Test func waitForOnAFinishedTokenDoesNothingAndDuplicatesAndEmptyAreFine() throws {
        var runsOfA = 0
        var completed = false
        let tokenA = dispatcher.register { _ in runsOfA += 1 }
        dispatcher.register { [dispatcher] _ in
            try dispatcher.waitFor([])
            try dispatcher.waitFor([tokenA, tokenA])
            try dispatcher.waitFor([tokenA])
            completed = true
        }
        try dispatcher.dispatch(0)
        #expect(runsOfA == 1)
        #expect(completed)
    }

    @Test func waitForOnARunningTokenIsCircularEvenIndirectly() {
        var tokens: [DispatchToken] = []
        for index in 0..<3 {
            tokens.append(dispatcher.register { [dispatcher] _ in try dispatcher.waitFor([tokens[(index + 1) % 3]]) })
        }
        #expect(throws: FluxError.circularDependency(tokens[0])) { try dispatcher.dispatch(0) }
        #expect(!dispatcher.isDispatching)
    }

    @Test func waitForOnANotYetRunTokenRunsItNow() throws {
        var order: [String] = []
        var later: DispatchToken!
        dispatcher.register { [dispatcher] _ in
            order.append("first starts")
            try dispatcher.waitFor([later])
            order.append("first ends")
        }
        later = dispatcher.register { _ in order.append("later") }
        try dispatcher.dispatch(0)
        #expect(order == ["first starts", "later", "first ends"])
    }

    // MARK: Throwing callbacks

    @Test func aThrowingCallbackEndsTheDispatchAndTheNextIsClean() throws {
        var ranAfter = 0
        var waitedOK = false
        let thrower = dispatcher.register { if $0 == 1 { throw Boom() } }
        dispatcher.register { _ in ranAfter += 1 }
        dispatcher.register { [dispatcher] _ in
            try dispatcher.waitFor([thrower])
            waitedOK = true
        }
        #expect(throws: Boom.self) { try dispatcher.dispatch(1) }
        #expect(ranAfter == 0)
        #expect(!dispatcher.isDispatching)
        try dispatcher.dispatch(2)
        #expect(ranAfter == 1)
        #expect(waitedOK)
    }

    // MARK: Nested dispatch

    @Test func nestedDispatchThrowsAndACaughtErrorLetsTheOuterDispatchGoOn() throws {
        var seen: [Int] = []
        var nestedError: FluxError?
        let first = dispatcher.register { seen.append($0) }
        dispatcher.register { [dispatcher] payload in
            do { try dispatcher.dispatch(payload + 100) } catch let error as FluxError { nestedError = error }
            // The failed nested call changed nothing: still dispatching, same payload, finished tokens finished.
            #expect(dispatcher.isDispatching)
            try dispatcher.waitFor([first])
            seen.append(payload)
        }
        dispatcher.register { seen.append($0) }
        try dispatcher.dispatch(7)
        #expect(nestedError == .dispatchInProgress)
        #expect(seen == [7, 7, 7])
    }

    // MARK: isDispatching

    @Test func isDispatchingIsTrueOnlyDuringADispatch() throws {
        var inside: Bool?
        dispatcher.register { [dispatcher] _ in inside = dispatcher.isDispatching }
        #expect(!dispatcher.isDispatching)
        try dispatcher.dispatch(0)
        #expect(inside == true)
        #expect(!dispatcher.isDispatching)
    }

    // MARK: Registering and unregistering during a dispatch

    @Test func aCallbackRegisteredDuringADispatchWaitsForTheNextPass() throws {
        var lateRuns: [Int] = []
        var registered = false
        dispatcher.register { [dispatcher] _ in
            guard !registered else { return }
            registered = true
            dispatcher.register { lateRuns.append($0) }
        }
        try dispatcher.dispatch(1)
        #expect(lateRuns.isEmpty)
        try dispatcher.dispatch(2)
        #expect(lateRuns == [2])
    }

    @Test func aCallbackRegisteredDuringADispatchRunsIfWaitedFor() throws {
        var lateRuns: [Int] = []
        dispatcher.register { [dispatcher] payload in
            let late = dispatcher.register { lateRuns.append($0) }
            try dispatcher.waitFor([late])
            try dispatcher.unregister(late)
        }
        try dispatcher.dispatch(5)
        #expect(lateRuns == [5])
    }

    @Test func aCallbackUnregisteredDuringADispatchBeforeItRanIsSkipped() throws {
        var runsOfB = 0
        var tokenB: DispatchToken!
        var waitError: FluxError?
        dispatcher.register { [dispatcher] _ in
            guard waitError == nil else { return }
            try dispatcher.unregister(tokenB)
            do { try dispatcher.waitFor([tokenB]) } catch let error as FluxError { waitError = error }
        }
        tokenB = dispatcher.register { _ in runsOfB += 1 }
        var runsOfC = 0
        dispatcher.register { _ in runsOfC += 1 }
        try dispatcher.dispatch(0)
        #expect(runsOfB == 0)
        #expect(runsOfC == 1)
        #expect(waitError == .unknownToken(tokenB))
        try dispatcher.dispatch(0)
        #expect(runsOfB == 0)
        #expect(runsOfC == 2)
    }

    @Test func aCallbackUnregisteredAfterItRanCanStillBeWaitedFor() throws {
        var runsOfA = 0
        let tokenA = dispatcher.register { _ in runsOfA += 1 }
        var waited = false
        dispatcher.register { [dispatcher] _ in
            guard !waited else { return }
            try dispatcher.unregister(tokenA)
            try dispatcher.waitFor([tokenA])
            waited = true
        }
        try dispatcher.dispatch(0)
        #expect(waited)
        #expect(runsOfA == 1)
        try dispatcher.dispatch(0)
        #expect(runsOfA == 1)
    }

    @Test func aCallbackThatUnregisteredItselfIsStillRunningForWaitFor() {
        var own: DispatchToken!
        own = dispatcher.register { [dispatcher] _ in
            try dispatcher.unregister(own)
            try dispatcher.waitFor([own])
        }
        #expect(throws: FluxError.circularDependency(own)) { try dispatcher.dispatch(0) }
        #expect(throws: FluxError.unknownToken(own)) { try dispatcher.unregister(own) }
    }

    @Test func aCallbackMayUnregisterItself() throws {
        var runs = 0
        var own: DispatchToken!
        own = dispatcher.register { [dispatcher] _ in
            runs += 1
            try dispatcher.unregister(own)
        }
        try dispatcher.dispatch(0)
        try dispatcher.dispatch(0)
        #expect(runs == 1)
    }
}
