import Testing
import ZeroMQ

@Suite(.timeLimit(.minutes(1)))
struct HighWaterMarkTests {
    /// A PUB never blocks: once a subscriber's queue holds its high-water mark, further messages for it are
    /// dropped. What arrives is a prefix-free subsequence, in order.
    @Test func publisherDropsWhenTheSubscriberDoesNotRead() async throws {
        let (sent, received) = try await onDedicatedThread {
            let context = try ZMQContext()
            let endpoint = uniqueInprocEndpoint()
            let publisher = try ZMQSocket(.pub, context: context)
            try publisher.set(.sendHighWaterMark, to: 10)
            try publisher.bind(endpoint)
            let subscriber = try ZMQSocket(.sub, context: context)
            try subscriber.set(.receiveHighWaterMark, to: 10)
            try subscriber.subscribe()
            try subscriber.connect(endpoint)
            _ = try publishUntilReceived(publisher, subscriber, probe: [bytes("probe")])
            while try subscriber.tryReceive() != nil {}

            let sent = 5_000
            for index in 0..<sent { #expect(try publisher.send([bytes("\(index)")], nonBlocking: true)) }
            var received: [Int] = []
            while let frames = try subscriber.receive(timeout: .milliseconds(100)) {
                received.append(Int(strings(frames)![0]) ?? -1)
            }
            return (sent, received)
        }
        #expect(received.count < sent)
        #expect(!received.isEmpty)
        #expect(received == received.sorted())
    }

    /// A DEALER whose peer does not read fills its pipe; a non-blocking send then returns `false` (EAGAIN), and
    /// a blocking send with a send timeout throws a would-block error.
    @Test func dealerNonBlockingSendReportsWouldBlockAtTheMark() async throws {
        let (accepted, refusedAt, timeoutError) = try await onDedicatedThread {
            let context = try ZMQContext()
            let endpoint = uniqueInprocEndpoint()
            let router = try ZMQSocket(.router, context: context)
            try router.set(.receiveHighWaterMark, to: 5)
            try router.bind(endpoint)
            let dealer = try ZMQSocket(.dealer, context: context)
            try dealer.set(.sendHighWaterMark, to: 5)
            try dealer.connect(endpoint)

            var accepted = 0
            var refusedAt: Int?
            for attempt in 0..<10_000 {
                if try dealer.send(bytes("job \(attempt)"), nonBlocking: true) {
                    accepted += 1
                } else {
                    refusedAt = attempt
                    break
                }
            }
            try dealer.set(.sendTimeout, to: .milliseconds(20))
            let error = try #require(throws: ZMQError.self) { try dealer.send(bytes("one more")) }
            return (accepted, refusedAt, error)
        }
        #expect(accepted >= 5)
        #expect(refusedAt == accepted)
        #expect(timeoutError.isWouldBlock)
    }

    /// With XPUB_NODROP, an XPUB at its high-water mark reports would-block instead of dropping.
    @Test func xpubNoDropTurnsDropsIntoWouldBlock() async throws {
        let refused = try await onDedicatedThread {
            let context = try ZMQContext()
            let endpoint = uniqueInprocEndpoint()
            let publisher = try ZMQSocket(.xpub, context: context)
            try publisher.set(.xpubNoDrop, to: true)
            try publisher.set(.sendHighWaterMark, to: 5)
            try publisher.bind(endpoint)
            let subscriber = try ZMQSocket(.sub, context: context)
            try subscriber.set(.receiveHighWaterMark, to: 5)
            try subscriber.subscribe()
            try subscriber.connect(endpoint)
            _ = try publisher.receive(timeout: patience) // the subscription notice: now the pipe exists
            for attempt in 0..<10_000 where !(try publisher.send(bytes("\(attempt)"), nonBlocking: true)) {
                return true
            }
            return false
        }
        #expect(refused)
    }
}
