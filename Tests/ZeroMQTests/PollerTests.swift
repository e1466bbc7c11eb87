import Testing
import ZeroMQ

@Suite(.timeLimit(.minutes(1)))
struct PollerTests {
    @Test func reportsOnlyTheReadySocket() async throws {
        try await onDedicatedThread {
            let context = try ZMQContext()
            let (quietIn, busyIn) = (try ZMQSocket(.pull, context: context), try ZMQSocket(.pull, context: context))
            let (quietEndpoint, busyEndpoint) = (uniqueInprocEndpoint(), uniqueInprocEndpoint())
            try quietIn.bind(quietEndpoint)
            try busyIn.bind(busyEndpoint)
            let busyOut = try ZMQSocket(.push, context: context)
            try busyOut.connect(busyEndpoint)

            var poller = ZMQPoller()
            let quiet = poller.add(quietIn)
            let busy = poller.add(busyIn)
            #expect(try poller.poll(timeout: .milliseconds(10)) == 0)
            #expect(poller[quiet].isEmpty && poller[busy].isEmpty)

            try busyOut.send(bytes("work"))
            #expect(try poller.poll(timeout: patience) == 1)
            #expect(poller[busy] == .readable)
            #expect(poller[quiet].isEmpty)
            #expect(poller.socket(at: busy) === busyIn)
            #expect(strings(try busyIn.tryReceive()) == ["work"])

            var writable = ZMQPoller()
            let out = writable.add(busyOut, events: .writable)
            #expect(try writable.poll(timeout: .zero) == 1)
            #expect(writable[out].contains(.writable))
        }
    }

    @Test func refusesToWaitForeverOnNothingAndOnClosedSockets() async throws {
        try await onDedicatedThread {
            var empty = ZMQPoller()
            #expect(try empty.poll(timeout: .milliseconds(1)) == 0)
            let forever = try #require(throws: ZMQError.self) { try empty.poll(timeout: nil) }
            #expect(forever.code == .invalidArgument)

            let context = try ZMQContext()
            let socket = try ZMQSocket(.pull, context: context)
            var poller = ZMQPoller()
            poller.add(socket)
            socket.close()
            let closed = try #require(throws: ZMQError.self) { try poller.poll(timeout: .zero) }
            #expect(closed.code == .notSocket)
        }
    }
}
