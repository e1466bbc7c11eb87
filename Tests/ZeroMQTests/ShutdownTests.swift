import Synchronization
import Testing
import ZeroMQ

@Suite(.timeLimit(.minutes(1)))
struct ShutdownTests {
    /// Messages queued to a peer that never shows up do not hold the process: closing the socket and releasing
    /// the context returns after at most the linger. No tight timing is asserted, only that it returns in a
    /// generous bound.
    @Test func contextTerminatesPromptlyWithMessagesPending() async throws {
        let (queued, elapsed) = try await onDedicatedThread {
            var queued = 0
            let elapsed = try ContinuousClock().measure {
                let context = try ZMQContext(defaultLinger: .milliseconds(100))
                let deadEnd = try unusedTCPEndpoint(context: context)
                let dealer = try ZMQSocket(.dealer, context: context)
                try dealer.connect(deadEnd)
                for index in 0..<100 where try dealer.send(bytes("pending \(index)"), nonBlocking: true) {
                    queued += 1
                }
                // Leaving this scope closes the socket (deinit) and then terminates the context (deinit).
            }
            return (queued, elapsed)
        }
        #expect(queued == 100)
        #expect(elapsed < .seconds(10))
    }

    /// The ordered way down from async code: stop the loop (which closes its sockets, messages still pending),
    /// then terminate the context, whose wait for the linger runs on a thread of its own.
    @Test func loopShutdownThenContextTerminateReturnWithMessagesPending() async throws {
        let context = try ZMQContext(defaultLinger: .milliseconds(100))
        let loop = try IOLoop(context: context, name: "test-pending")
        let deadEnd = try await onDedicatedThread { try unusedTCPEndpoint(context: context) }
        let queued = try await loop.run { scope in
            let dealer = try scope.socket(.dealer)
            try dealer.connect(deadEnd)
            var queued = 0
            for index in 0..<100 where try dealer.send(bytes("pending \(index)"), nonBlocking: true) { queued += 1 }
            return IOLoopBound(dealer, scope: scope) // still open when the loop shuts down
        }
        let elapsed = await ContinuousClock().measure {
            await loop.shutdown()
            await context.terminate()
        }
        withExtendedLifetime(queued) {}
        #expect(context.isTerminated)
        #expect(elapsed < .seconds(10))
        let refused = try #require(throws: ZMQError.self) { try ZMQSocket(.dealer, context: context) }
        #expect(refused.isTerminated)
        await context.terminate() // again: returns at once
    }

    /// `terminate()` from one thread while another is blocked in a receive: the receive fails with ETERM, its
    /// owner closes the socket, and the termination completes.
    @Test func terminateWakesBlockedOwnersAndWaitsForThemToClose() async throws {
        let context = try ZMQContext()
        let ready = Atomic<Bool>(false)
        async let receiver = onDedicatedThread { () throws -> Bool in
            let socket = try ZMQSocket(.pull, context: context)
            defer { socket.close() }
            try socket.bind(uniqueInprocEndpoint())
            ready.store(true, ordering: .releasing)
            do {
                _ = try socket.receive()
                return false
            } catch let error as ZMQError {
                return error.isTerminated
            }
        }
        while !ready.load(ordering: .acquiring) { try await Task.sleep(for: .milliseconds(1)) }
        let terminated = try await onDedicatedThread {
            context.terminate()
            return context.isTerminated
        }
        #expect(terminated)
        #expect(try await receiver)
    }

    @Test func shutdownIsIdempotentAndRefusesNewSockets() async throws {
        try await onDedicatedThread {
            let context = try ZMQContext()
            let socket = try ZMQSocket(.dealer, context: context)
            context.shutdown()
            context.shutdown()
            #expect(context.isShutDown)
            let error = try #require(throws: ZMQError.self) { try socket.connect("inproc://anywhere") }
            #expect(error.isTerminated)
            let refused = try #require(throws: ZMQError.self) { try ZMQSocket(.dealer, context: context) }
            #expect(refused.isTerminated)
            socket.close()
        }
    }
}
