import Testing
import ZeroMQ

@Suite(.timeLimit(.minutes(1)))
struct MonitorTests {
    @Test func reportsListeningAcceptedAndConnected() async throws {
        let (listening, accepted, connected, handshake) = try await onDedicatedThread {
            let context = try ZMQContext()
            let server = try ZMQSocket(.router, context: context)
            let serverEvents = try server.monitor()
            try server.bind("tcp://127.0.0.1:*")
            let endpoint = try server.lastEndpoint
            let client = try ZMQSocket(.dealer, context: context)
            let clientEvents = try client.monitor([.connected, .handshakeSucceeded])
            try client.connect(endpoint)
            return (
                try serverEvents.receive(until: { $0.event == .listening }, timeout: patience),
                try serverEvents.receive(until: { $0.event == .accepted }, timeout: patience),
                try clientEvents.receive(until: { $0.event == .connected }, timeout: patience),
                try clientEvents.receive(until: { $0.event == .handshakeSucceeded }, timeout: patience)
            )
        }
        let listen = try #require(listening)
        #expect(listen.endpoint.hasPrefix("tcp://127.0.0.1:"))
        #expect(accepted?.endpoint == listen.endpoint)
        #expect(connected?.endpoint == listen.endpoint)
        #expect(handshake != nil)
    }

    @Test func decodesLibzmqEventFramesAndRejectsOthers() throws {
        var header = [UInt8](repeating: 0, count: 6)
        withUnsafeBytes(of: UInt16(0x4000)) { header.replaceSubrange(0..<2, with: $0) }
        withUnsafeBytes(of: UInt32(400)) { header.replaceSubrange(2..<6, with: $0) }
        let record = try MonitorRecord(frames: [header, bytes("tcp://127.0.0.1:9")])
        #expect(record == MonitorRecord(event: .handshakeFailedAuth, value: 400, endpoint: "tcp://127.0.0.1:9"))
        #expect(record.description == "handshakeFailedAuth(400) tcp://127.0.0.1:9")
        #expect(MonitorEvent(rawValue: 0x8000) == .unknown(0x8000))
        #expect(MonitorEvent.known.allSatisfy { MonitorEvent(rawValue: $0.rawValue) == $0 })

        let error = try #require(throws: ZMQError.self) { try MonitorRecord(frames: [[1, 2, 3]]) }
        #expect(error.code == .protocolError)
    }

    /// MAXMSGSIZE: a peer that sends a larger message is disconnected, and the message is never delivered.
    @Test func oversizeMessageMakesTheReceiverDropTheConnection() async throws {
        let (disconnect, delivered, smallDelivered) = try await onDedicatedThread {
            let context = try ZMQContext()
            let server = try ZMQSocket(.router, context: context)
            try server.set(.maxMessageSize, to: 100)
            let events = try server.monitor()
            try server.bind("tcp://127.0.0.1:*")
            let endpoint = try server.lastEndpoint

            let small = try ZMQSocket(.dealer, context: context)
            try small.connect(endpoint)
            try small.send([UInt8](repeating: 1, count: 50))
            let smallDelivered = try server.receive(timeout: patience)

            let large = try ZMQSocket(.dealer, context: context)
            try large.connect(endpoint)
            try large.send([UInt8](repeating: 2, count: 1_000))
            let disconnect = try events.receive(until: { $0.event == .disconnected }, timeout: patience)
            let delivered = try server.receive(timeout: quietPeriod)
            return (disconnect, delivered, smallDelivered)
        }
        #expect(smallDelivered?.last?.count == 50)
        #expect(disconnect != nil)
        #expect(delivered == nil)
    }
}
