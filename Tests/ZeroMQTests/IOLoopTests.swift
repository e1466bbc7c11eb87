import Dispatch
import Foundation
import Synchronization
import Testing
import ZeroMQ

@Suite(.timeLimit(.minutes(1)))
struct IOLoopTests {
    struct Failure: Error, Equatable {
        let reason: String
    }

    @Test func runExecutesOnTheLoopThreadAndReturnsOrThrows() async throws {
        let loop = try IOLoop(context: try ZMQContext(), name: "test-run")
        #expect(!loop.isCurrent)
        let (value, wasCurrent) = try await loop.run { _ in (42, loop.isCurrent) }
        #expect(value == 42)
        #expect(wasCurrent)
        await #expect(throws: Failure(reason: "nope")) {
            try await loop.run { _ in throw Failure(reason: "nope") }
        }
        await loop.shutdown()
    }

    /// Messages go in through the inbox (`execute`, `run`) and come out to async code through an AsyncStream that a
    /// read handler yields into.
    @Test func inboxInAsyncStreamOut() async throws {
        let loop = try IOLoop(context: try ZMQContext(), name: "test-inbox")
        let (arrivals, output) = AsyncStream.makeStream(of: [String].self)
        let endpoint = uniqueInprocEndpoint()
        try await loop.run { scope in
            let router = try scope.socket(.router)
            try router.bind(endpoint)
            scope.add(router) { socket in
                while let frames = try socket.tryReceive() {
                    output.yield(strings(frames)!)
                    try socket.send([frames[0], bytes("ack " + strings([frames[1]])![0])])
                }
            }
        }
        let (acks, ackOutput) = AsyncStream.makeStream(of: String.self)
        let client = try await loop.run { scope in
            let dealer = try scope.socket(.dealer)
            try dealer.set(.routingID, to: bytes("client"))
            try dealer.connect(endpoint)
            scope.add(dealer) { socket in
                while let frames = try socket.tryReceive() { ackOutput.yield(strings(frames)![0]) }
            }
            return IOLoopBound(dealer, scope: scope)
        }
        for index in 1...3 {
            #expect(loop.execute { _ in try client.value.send(bytes("job \(index)")) })
        }
        var received: [[String]] = []
        for await frames in arrivals {
            received.append(frames)
            if received.count == 3 { break }
        }
        #expect(received == [["client", "job 1"], ["client", "job 2"], ["client", "job 3"]])
        var acknowledged: [String] = []
        for await ack in acks {
            acknowledged.append(ack)
            if acknowledged.count == 3 { break }
        }
        #expect(acknowledged == ["ack job 1", "ack job 2", "ack job 3"])
        await loop.shutdown()
    }

    @Test func timersFireRepeatAndCancel() async throws {
        let loop = try IOLoop(context: try ZMQContext(), name: "test-timers")
        let (events, output) = AsyncStream.makeStream(of: String.self)
        let cancelledFromOutside = try await loop.run { scope in
            var ticks = 0
            var ticker: IOLoopTimer?
            ticker = scope.schedule(every: .milliseconds(10)) {
                ticks += 1
                output.yield("tick \(ticks)")
                if ticks == 3 { ticker?.cancel() }
            }
            scope.schedule(after: .milliseconds(5)) { output.yield("once") }
            let doomed = scope.schedule(after: .seconds(1)) { output.yield("cancelled timer fired") }
            scope.schedule(after: .milliseconds(1_100)) { output.yield("done") }
            // Cancelled from another thread at once: a plain thread, not a task, so a busy cooperative pool cannot
            // delay the cancel past the timer's deadline.
            Thread { doomed.cancel() }.start()
            return doomed
        }
        var seen: [String] = []
        for await event in events {
            seen.append(event)
            if event == "done" { break }
        }
        #expect(cancelledFromOutside.isCancelled)
        #expect(seen == ["once", "tick 1", "tick 2", "tick 3", "done"])
        await loop.shutdown()
    }

    /// A timer cancelled on the loop's thread neither fires nor ends a wait: the loop, with nothing else to do,
    /// sleeps once from the cancel to the next live deadline (the earliest deadline it keeps counts cancelled timers,
    /// and the wait must not).
    @Test func aCancelledTimerDoesNotEndAWait() async throws {
        let loop = try IOLoop(context: try ZMQContext(), name: "test-cancelled-wait")
        let (events, output) = AsyncStream.makeStream(of: String.self)
        try await loop.run { scope in
            for _ in 0..<50 { scope.schedule(after: .milliseconds(20)) { output.yield("cancelled timer fired") }.cancel() }
            let waitsBefore = scope.waits
            scope.schedule(after: .milliseconds(200)) { output.yield("waits \(scope.waits - waitsBefore)") }
        }
        var seen: [String] = []
        for await event in events {
            seen.append(event)
            if event.hasPrefix("waits") { break }
        }
        // One wait, to the live deadline: waking at the cancelled timers' deadline would be a second.
        #expect(seen == ["waits 1"])
        await loop.shutdown()
    }

    @Test func errorsFromJobsGoToOnErrorAndTheLoopGoesOn() async throws {
        let (errors, output) = AsyncStream.makeStream(of: String.self)
        let loop = try IOLoop(context: try ZMQContext(), name: "test-errors") { error in
            output.yield("\(error)")
        }
        loop.execute { _ in throw Failure(reason: "first") }
        loop.execute { scope in scope.schedule(after: .zero) { throw Failure(reason: "timer") } }
        var iterator = errors.makeAsyncIterator()
        #expect(await iterator.next() == "\(Failure(reason: "first"))")
        #expect(await iterator.next() == "\(Failure(reason: "timer"))")
        #expect(try await loop.run { _ in "still running" } == "still running")
        await loop.shutdown()
    }

    @Test func shutdownJoinsTheThreadAndClosesItsSockets() async throws {
        let context = try ZMQContext()
        let loop = try IOLoop(context: context, name: "test-shutdown")
        let endpoint = uniqueInprocEndpoint()
        let ranQueuedJob = Atomic<Bool>(false)
        try await loop.run { scope in
            let pending = try scope.socket(.dealer)
            try pending.bind(endpoint)
            // Messages that cannot be delivered: shutdown must still return, thanks to the context's linger.
            for index in 0..<10 { _ = try pending.send(bytes("\(index)"), nonBlocking: true) }
            _ = IOLoopBound(pending, scope: scope) // keep it alive past this job, unregistered
        }
        loop.execute { _ in ranQueuedJob.store(true, ordering: .relaxed) }
        await loop.shutdown()

        let queuedJobRan = ranQueuedJob.load(ordering: .relaxed)
        #expect(queuedJobRan) // queued before shutdown: still run
        #expect(!loop.isRunning)
        #expect(!loop.execute { _ in })
        let error = await #expect(throws: ZMQError.self) { try await loop.run { _ in } }
        #expect(error?.isTerminated == true)
        await loop.shutdown() // a second shutdown returns at once

        // The loop closed its socket, so the inproc name is free again. libzmq's reaper thread frees the name after
        // the close returns, so a bind right after it can still find it taken: the name must be free within 5 s.
        try await onDedicatedThread {
            let socket = try ZMQSocket(.dealer, context: context)
            let deadline = ContinuousClock.now + .seconds(5)
            while true {
                do {
                    return try socket.bind(endpoint)
                } catch let error as ZMQError where error.code == .addressInUse && ContinuousClock.now < deadline {
                    Thread.sleep(forTimeInterval: 0.01)
                }
            }
        }
    }

    /// Regression: a stop request whose wake-up was consumed together with a queued job must not leave the loop
    /// blocked in `zmq_poll` with nothing left to wake it.
    @Test func shutdownWithAJobQueuedBehindABusyLoop() async throws {
        let loop = try IOLoop(context: try ZMQContext(), name: "test-queued-shutdown")
        let gate = DispatchSemaphore(value: 0)
        let ran = Atomic<Bool>(false)
        loop.execute { _ in gate.wait() }
        loop.execute { _ in ran.store(true, ordering: .relaxed) }
        let stopping = Task { await loop.shutdown() }
        while loop.isRunning { try await Task.sleep(for: .milliseconds(1)) }
        gate.signal()
        await stopping.value
        let queuedJobRan = ran.load(ordering: .relaxed)
        #expect(queuedJobRan)
    }

    @Test func blockingShutdownFromAPlainThread() async throws {
        let loop = try IOLoop(context: try ZMQContext(), name: "test-sync-shutdown")
        try await loop.run { scope in scope.schedule(every: .seconds(60)) {} }
        let stopped = try await onDedicatedThread {
            loop.shutdown()
            return !loop.isRunning
        }
        #expect(stopped)
    }

    @Test func stopFromInsideAHandler() async throws {
        let loop = try IOLoop(context: try ZMQContext(), name: "test-stop-inside")
        loop.execute { scope in scope.schedule(after: .milliseconds(10)) { scope.stop() } }
        await loop.shutdown()
        #expect(!loop.isRunning)
    }

    @Test func contextShutdownStopsTheLoop() async throws {
        let context = try ZMQContext()
        let loop = try IOLoop(context: context, name: "test-context-shutdown")
        try await loop.run { scope in
            let socket = try scope.socket(.pull)
            try socket.bind(uniqueInprocEndpoint())
            scope.add(socket) { socket in _ = try socket.tryReceive() }
        }
        context.shutdown()
        while loop.isRunning { try await Task.sleep(for: .milliseconds(5)) }
        await loop.shutdown()
        #expect(!loop.isRunning)
    }

    /// A loop that serves no socket still notices the context going away (through its sentinel socket), so
    /// terminating the context alone stops the loop and closes the sockets it created.
    @Test func contextTerminationAloneStopsALoopThatServesNoSocket() async throws {
        let context = try ZMQContext()
        let loop = try IOLoop(context: context, name: "test-idle-terminate")
        let kept = try await loop.run { scope in IOLoopBound(try scope.socket(.dealer), scope: scope) }
        await context.terminate()
        #expect(context.isTerminated)
        await loop.shutdown()
        #expect(!loop.isRunning)
        withExtendedLifetime(kept) {}
    }

    @Test func aLoopOnAShutDownContextStopsAtOnce() async throws {
        let context = try ZMQContext()
        context.shutdown()
        let loop = try IOLoop(context: context, name: "test-dead-context")
        await loop.shutdown()
        #expect(!loop.isRunning)
        let error = await #expect(throws: ZMQError.self) { try await loop.run { _ in } }
        #expect(error?.isTerminated == true)
    }

    /// A `run` whose task is cancelled before the loop gets to it is skipped and throws CancellationError.
    @Test func cancelledRunIsSkipped() async throws {
        let loop = try IOLoop(context: try ZMQContext(), name: "test-cancel")
        let gate = DispatchSemaphore(value: 0)
        let ran = Atomic<Bool>(false)
        loop.execute { _ in gate.wait() } // hold the loop thread (not the cooperative pool) until released
        let task = Task { try await loop.run { _ in ran.store(true, ordering: .relaxed) } }
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        gate.signal()
        try await loop.run { _ in }
        let skippedJobRan = ran.load(ordering: .relaxed)
        #expect(!skippedJobRan)
        await loop.shutdown()
    }

    @Test func removedSocketsAreNoLongerServed() async throws {
        let loop = try IOLoop(context: try ZMQContext(), name: "test-remove")
        let endpoint = uniqueInprocEndpoint()
        let (events, output) = AsyncStream.makeStream(of: String.self)
        let sockets = try await loop.run { scope in
            let pull = try scope.socket(.pull)
            try pull.bind(endpoint)
            let push = try scope.socket(.push)
            try push.connect(endpoint)
            scope.add(pull) { socket in
                while let frames = try socket.tryReceive() { output.yield(strings(frames)![0]) }
            }
            return IOLoopBound((pull, push), scope: scope)
        }
        try await loop.run { _ in try sockets.value.1.send(bytes("served")) }
        var iterator = events.makeAsyncIterator()
        #expect(await iterator.next() == "served")
        let leftOver = try await loop.run { scope in
            scope.remove(sockets.value.0)
            try sockets.value.1.send(bytes("not served"))
            return strings(try sockets.value.0.receive(timeout: patience))
        }
        #expect(leftOver == ["not served"]) // still open and readable, just not dispatched
        await loop.shutdown()
    }
}
