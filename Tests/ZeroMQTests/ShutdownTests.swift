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
