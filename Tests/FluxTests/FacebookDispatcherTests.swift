import Testing

@testable import Flux

/// Facebook's own Dispatcher test suite (flux/src/__tests__/Dispatcher-test.js), all ten cases, ported one to one.
@Suite("Facebook's Dispatcher tests")
struct FacebookDispatcherTests {
    let dispatcher = Dispatcher<Payload>()
    let callbackA = CallRecorder<Payload>()
    let callbackB = CallRecorder<Payload>()

    @Test("should execute all subscriber callbacks")
    func executesAllSubscriberCallbacks() throws {
        dispatcher.register(callbackA.callAsFunction)
        dispatcher.register(callbackB.callAsFunction)
        let payload = Payload()
        try dispatcher.dispatch(payload)
        #expect(callbackA.count == 1)
        #expect(callbackA.calls[0] === payload)
        #expect(callbackB.count == 1)
        #expect(callbackB.calls[0] === payload)

        try dispatcher.dispatch(payload)
        #expect(callbackA.count == 2)
        #expect(callbackA.calls[1] === payload)
        #expect(callbackB.count == 2)
        #expect(callbackB.calls[1] === payload)
    }

    @Test("should wait for callbacks registered earlier")
    func waitsForCallbacksRegisteredEarlier() throws {
        let tokenA = dispatcher.register(callbackA.callAsFunction)
        dispatcher.register { [dispatcher, callbackA, callbackB] payload in
            try dispatcher.waitFor([tokenA])
            #expect(callbackA.count == 1)
            #expect(callbackA.calls[0] === payload)
            callbackB(payload)
        }
        let payload = Payload()
        try dispatcher.dispatch(payload)
        #expect(callbackA.count == 1)
        #expect(callbackA.calls[0] === payload)
        #expect(callbackB.count == 1)
        #expect(callbackB.calls[0] === payload)
    }

    @Test("should wait for callbacks registered later")
    func waitsForCallbacksRegisteredLater() throws {
        var tokenB: DispatchToken?
        dispatcher.register { [dispatcher, callbackA, callbackB] payload in
            try dispatcher.waitFor([tokenB!])
            #expect(callbackB.count == 1)
            #expect(callbackB.calls[0] === payload)
            callbackA(payload)
        }
        tokenB = dispatcher.register(callbackB.callAsFunction)
        let payload = Payload()
        try dispatcher.dispatch(payload)
        #expect(callbackA.count == 1)
        #expect(callbackA.calls[0] === payload)
        #expect(callbackB.count == 1)
        #expect(callbackB.calls[0] === payload)
    }

    @Test("should throw if dispatch() while dispatching")
    func throwsOnDispatchWhileDispatching() {
        dispatcher.register { [dispatcher, callbackA] payload in
            try dispatcher.dispatch(payload)
            callbackA(payload)
        }
        #expect(throws: FluxError.dispatchInProgress) { try dispatcher.dispatch(Payload()) }
        #expect(callbackA.count == 0)
    }

    @Test("should throw if waitFor() while not dispatching")
    func throwsOnWaitForWhileNotDispatching() {
        let tokenA = dispatcher.register(callbackA.callAsFunction)
        #expect(throws: FluxError.notDispatching) { try dispatcher.waitFor([tokenA]) }
        #expect(callbackA.count == 0)
    }

    @Test("should throw if waitFor() with invalid token")
    func throwsOnWaitForWithInvalidToken() {
        let invalidToken = DispatchToken(rawValue: "1337")
        dispatcher.register { [dispatcher] _ in try dispatcher.waitFor([invalidToken]) }
        #expect(throws: FluxError.unknownToken(invalidToken)) { try dispatcher.dispatch(Payload()) }
    }

    @Test("should throw on self-circular dependencies")
    func throwsOnSelfCircularDependencies() {
        var tokenA: DispatchToken?
        tokenA = dispatcher.register { [dispatcher, callbackA] payload in
            try dispatcher.waitFor([tokenA!])
            callbackA(payload)
        }
        #expect(throws: FluxError.circularDependency(tokenA!)) { try dispatcher.dispatch(Payload()) }
        #expect(callbackA.count == 0)
    }

    @Test("should throw on multi-circular dependencies")
    func throwsOnMultiCircularDependencies() {
        var tokenA: DispatchToken?
        var tokenB: DispatchToken?
        tokenA = dispatcher.register { [dispatcher, callbackA] payload in
            try dispatcher.waitFor([tokenB!])
            callbackA(payload)
        }
        tokenB = dispatcher.register { [dispatcher, callbackB] payload in
            try dispatcher.waitFor([tokenA!])
            callbackB(payload)
        }
        #expect(throws: FluxError.circularDependency(tokenA!)) { try dispatcher.dispatch(Payload()) }
        #expect(callbackA.count == 0)
        #expect(callbackB.count == 0)
    }

    @Test("should remain in a consistent state after a failed dispatch")
    func remainsConsistentAfterFailedDispatch() throws {
        dispatcher.register(callbackA.callAsFunction)
        dispatcher.register { [callbackB] payload in
            if payload.shouldThrow { throw Boom() }
            callbackB(payload)
        }
        #expect(throws: Boom.self) { try dispatcher.dispatch(Payload(shouldThrow: true)) }
        // Facebook makes no assumption about a failed dispatch's callbacks; only about the next one.
        let callbackACount = callbackA.count
        try dispatcher.dispatch(Payload(shouldThrow: false))
        #expect(callbackA.count == callbackACount + 1)
        #expect(callbackB.count == 1)
    }

    @Test("should properly unregister callbacks")
    func unregistersCallbacks() throws {
        dispatcher.register(callbackA.callAsFunction)
        let tokenB = dispatcher.register(callbackB.callAsFunction)
        let payload = Payload()
        try dispatcher.dispatch(payload)
        #expect(callbackA.count == 1)
        #expect(callbackA.calls[0] === payload)
        #expect(callbackB.count == 1)
        #expect(callbackB.calls[0] === payload)

        try dispatcher.unregister(tokenB)
        try dispatcher.dispatch(payload)
        #expect(callbackA.count == 2)
        #expect(callbackA.calls[1] === payload)
        #expect(callbackB.count == 1)
    }
}
