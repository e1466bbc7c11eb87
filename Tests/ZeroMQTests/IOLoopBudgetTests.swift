import Dispatch
import Testing
import ZeroMQ

/// The loop's syscall budget per message (issue 17), counted rather than timed: every wait is one `poll(2)`, and
/// every `ZMQ_EVENTS` asked costs libzmq a `getpid` and a `poll` of the socket's mailbox.
@Suite(.timeLimit(.minutes(1)))
struct IOLoopBudgetTests {
    /// Lock-step echoes through a ROUTER served by the loop, beside idle sockets it also serves: each message costs
    /// the loop one wait (no extra non-blocking poll, no short timeout) and one `ZMQ_EVENTS`, of the ROUTER alone, when
    /// its descriptor fired. The handler's last receive found nothing, which tells the loop as much as asking again;
    /// the idle sockets are never asked. The loop on `zmq_poll` it replaced made two waits per message, each asking
    /// every socket twice.
    @Test func oneWaitAndOneQueryPerEchoedMessage() async throws {
        let context = try ZMQContext()
        let loop = try IOLoop(context: context, name: "test-budget")
        let endpoint = try await loop.run { scope in
            let router = try scope.socket(.router)
            try router.bind("tcp://127.0.0.1:*")
            scope.add(router) { socket in
                while let frames = try socket.tryReceive() { try socket.send(frames, nonBlocking: true) }
            }
            for _ in 0..<3 {
                let idle = try scope.socket(.pull)
                try idle.bind("tcp://127.0.0.1:*")
                scope.add(idle) { socket in _ = try socket.tryReceive() }
            }
            return try router.lastEndpoint
        }
        let echoes = 200
        let (before, after) = try await onDedicatedThread { () throws -> ((Int, Int), (Int, Int)) in
            let dealer = try ZMQSocket(.dealer, context: context)
            defer { dealer.close() }
            try dealer.connect(endpoint)
            func echo(_ index: Int) throws {
                try dealer.send(bytes("echo \(index)"))
                let reply = try dealer.receive(timeout: patience)
                #expect(strings(reply) == ["echo \(index)"])
            }
            for index in 0..<20 { try echo(index) }  // the connection is up, and the loop waits in its steady state
            let before = try loop.runBlocking { scope in (scope.waits, scope.readinessQueries) }
            for index in 0..<echoes { try echo(index) }
            let after = try loop.runBlocking { scope in (scope.waits, scope.readinessQueries) }
            return (before, after)
        }
        // Slack for the two jobs that read the figures (each wakes the loop once) and the odd extra wake-up.
        let waits = after.0 - before.0
        let queries = after.1 - before.1
        // Fewer waits than messages is fine: a reply may come back, and the next message in, while the handler is
        // still draining.
        #expect(waits <= echoes + 10, "one wait per message, \(echoes) messages: \(waits)")
        #expect(queries <= echoes + 10, "one ZMQ_EVENTS per message, \(echoes) messages: \(queries)")
        await loop.shutdown()
    }

    /// The loop waits on edge-triggered descriptors, yet stays level-triggered for handlers: one that returns without
    /// receiving is called again at once for the message still waiting, with no new command to make its descriptor
    /// fire (the sender stays open; the jobs that look touch neither socket).
    @Test func aHandlerThatLeftItsMessageIsCalledAgain() async throws {
        let loop = try IOLoop(context: try ZMQContext(), name: "test-level")
        let endpoint = uniqueInprocEndpoint()
        let state = try await loop.run { scope in
            let pull = try scope.socket(.pull)
            try pull.bind(endpoint)
            let push = try scope.socket(.push)
            try push.connect(endpoint)
            let state = IOLoopBound((push: push, calls: 0, received: [String]()), scope: scope)
            scope.add(pull) { socket in
                state.value.calls += 1
                guard state.value.calls > 1 else { return }  // the first call leaves the message where it is
                while let frames = try socket.tryReceive() { state.value.received += strings(frames)! }
            }
            return state
        }
        try await loop.run { _ in try state.value.push.send(bytes("only one")) }
        let deadline = ContinuousClock.now.advanced(by: patience)
        var outcome = (calls: 0, received: [String]())
        while ContinuousClock.now < deadline {
            outcome = try await loop.run { _ in (state.value.calls, state.value.received) }
            if !outcome.received.isEmpty { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(outcome.received == ["only one"])
        #expect(outcome.calls == 2)
        await loop.shutdown()
    }
}

extension IOLoop {
    /// Runs `job` on the loop and blocks the calling (non-cooperative) thread until it returns.
    fileprivate func runBlocking<Value: Sendable>(_ job: @escaping @Sendable (IOLoopScope) -> Value) throws -> Value {
        let slot = Slot<Value>()
        let done = DispatchSemaphore(value: 0)
        #expect(execute { scope in
            slot.value = job(scope)
            done.signal()
        })
        done.wait()
        return try #require(slot.value)
    }
}

/// @unchecked Sendable: written on the loop's thread before `done.signal()`, read after `done.wait()`; the semaphore
/// orders the two.
private final class Slot<Value>: @unchecked Sendable {
    var value: Value?
}
