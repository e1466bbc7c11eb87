import Foundation
import Synchronization
import Testing
import ZeroMQ

@Suite(.timeLimit(.minutes(1)))
struct SocketTests {
    @Test func ephemeralTCPBindReportsTheRealPort() async throws {
        let endpoint = try await onDedicatedThread {
            let context = try ZMQContext()
            let socket = try ZMQSocket(.router, context: context)
            try socket.bind("tcp://127.0.0.1:*")
            return try socket.lastEndpoint
        }
        #expect(endpoint.hasPrefix("tcp://127.0.0.1:"))
        let port = try #require(Int(endpoint.split(separator: ":").last ?? ""))
        #expect(port > 0 && port < 65536)
    }

    enum Transport: String, CaseIterable, Sendable { case inproc, ipc, tcp }

    @Test(arguments: Transport.allCases)
    func multipartRoundTripKeepsEveryFrame(over transport: Transport) async throws {
        let (request, reply) = try await onDedicatedThread {
            let context = try ZMQContext()
            let server = try ZMQSocket(.rep, context: context)
            let endpoint: String = switch transport {
            case .inproc: uniqueInprocEndpoint()
            case .ipc: uniqueIPCEndpoint()
            case .tcp: "tcp://127.0.0.1:*"
            }
            defer { if transport == .ipc { removeIPCFile(endpoint) } }
            try server.bind(endpoint)
            let client = try ZMQSocket(.req, context: context)
            try client.connect(try server.lastEndpoint)
            let frames: [[UInt8]] = [bytes("head"), [], [0, 255, 1, 254], Array(repeating: 7, count: 100_000)]
            try client.send(frames)
            let request = try #require(try server.receive(timeout: patience))
            try server.send(bytes("ok"))
            let reply = try #require(try client.receive(timeout: patience))
            return (request, reply)
        }
        #expect(request.count == 4)
        #expect(request[0] == bytes("head"))
        #expect(request[1].isEmpty)
        #expect(request[2] == [0, 255, 1, 254])
        #expect(request[3] == Array(repeating: 7, count: 100_000))
        #expect(strings(reply) == ["ok"])
    }

    @Test func optionsReadBackWhatWasSet() async throws {
        try await onDedicatedThread {
            let context = try ZMQContext(defaultLinger: .milliseconds(50))
            let socket = try ZMQSocket(.dealer, context: context)
            #expect(try socket.get(.linger) == .milliseconds(50))
            try socket.set(.linger, to: nil)
            #expect(try socket.get(.linger) == nil)
            try socket.set(.linger, to: .zero)
            #expect(try socket.get(.linger) == .zero)
            try socket.set(.sendHighWaterMark, to: 7)
            try socket.set(.receiveHighWaterMark, to: 9)
            #expect(try socket.get(.sendHighWaterMark) == 7)
            #expect(try socket.get(.receiveHighWaterMark) == 9)
            try socket.set(.routingID, to: bytes("worker-1"))
            #expect(try socket.get(.routingID) == bytes("worker-1"))
            #expect(try socket.get(.maxMessageSize) == nil)
            try socket.set(.maxMessageSize, to: 1 << 20)
            #expect(try socket.get(.maxMessageSize) == 1 << 20)
            try socket.set(.immediate, to: true)
            #expect(try socket.get(.immediate) == true)
            try socket.set(.heartbeatInterval, to: .seconds(1))
            try socket.set(.heartbeatTimeout, to: .seconds(3))
            try socket.set(.heartbeatTTL, to: .seconds(5))
            #expect(try socket.get(.heartbeatInterval) == .seconds(1))
            #expect(try socket.get(.heartbeatTimeout) == .seconds(3))
            #expect(try socket.get(.heartbeatTTL) == .seconds(5))
            try socket.set(.reconnectInterval, to: .milliseconds(250))
            try socket.set(.reconnectIntervalMax, to: .seconds(2))
            #expect(try socket.get(.reconnectInterval) == .milliseconds(250))
            #expect(try socket.get(.reconnectIntervalMax) == .seconds(2))
            try socket.set(.tcpKeepalive, to: true)
            try socket.set(.tcpKeepaliveIdle, to: .seconds(30))
            try socket.set(.tcpKeepaliveInterval, to: .seconds(5))
            try socket.set(.tcpKeepaliveCount, to: 3)
            #expect(try socket.get(.tcpKeepalive) == true)
            #expect(try socket.get(.tcpKeepaliveIdle) == .seconds(30))
            #expect(try socket.get(.tcpKeepaliveInterval) == .seconds(5))
            #expect(try socket.get(.tcpKeepaliveCount) == 3)
            #expect(try socket.get(.receiveTimeout) == nil)
            try socket.set(.sendTimeout, to: .milliseconds(1500))
            #expect(try socket.get(.sendTimeout) == .milliseconds(1500))
            try socket.set(.zapDomain, to: "fluxbus")
            #expect(try socket.get(.zapDomain) == "fluxbus")
            #expect(try socket.get(.events) == [])
            #expect(try socket.get(.fileDescriptor) >= 0)
            // Options of another socket type are refused, and so is reading a write-only option.
            let wrongType = try #require(throws: ZMQError.self) { try socket.set(.routerMandatory, to: true) }
            #expect(wrongType.code == .invalidArgument)
            #expect(wrongType.operation == "set routerMandatory on DEALER socket")
            let router = try ZMQSocket(.router, context: context)
            try router.set(.routerMandatory, to: true)
            #expect(throws: ZMQError.self) { try router.get(.routerMandatory) }
        }
    }

    @Test func subMillisecondTimesRoundUpNotDown() async throws {
        try await onDedicatedThread {
            let context = try ZMQContext()
            let socket = try ZMQSocket(.dealer, context: context)
            try socket.set(.receiveTimeout, to: .microseconds(10))
            #expect(try socket.get(.receiveTimeout) == .milliseconds(1))
        }
    }

    @Test func receiveTimeoutSurfacesAsWouldBlock() async throws {
        try await onDedicatedThread {
            let context = try ZMQContext()
            let socket = try ZMQSocket(.pull, context: context)
            try socket.bind(uniqueInprocEndpoint())
            #expect(try socket.tryReceive() == nil)
            #expect(try socket.receive(timeout: .milliseconds(20)) == nil)
            try socket.set(.receiveTimeout, to: .milliseconds(20))
            let error = try #require(throws: ZMQError.self) { try socket.receive() }
            #expect(error.isWouldBlock)
            #expect(error.operation.contains("receive timeout"))
        }
    }

    @Test func closeIsIdempotentAndLaterCallsThrowNotSocket() async throws {
        try await onDedicatedThread {
            let context = try ZMQContext()
            let socket = try ZMQSocket(.pair, context: context)
            socket.close()
            socket.close()
            #expect(socket.isClosed)
            let error = try #require(throws: ZMQError.self) { try socket.bind(uniqueInprocEndpoint()) }
            #expect(error.code == .notSocket)
            #expect(throws: ZMQError.self) { try socket.send(bytes("x")) }
        }
    }

    @Test func badEndpointsAndEmptyMessagesAreRejected() async throws {
        try await onDedicatedThread {
            let context = try ZMQContext()
            let socket = try ZMQSocket(.dealer, context: context)
            let malformed = try #require(throws: ZMQError.self) { try socket.connect("tcp://nowhere") }
            #expect(malformed.operation == "connect tcp://nowhere")
            #expect(throws: ZMQError.self) { try socket.bind("carrier-pigeon://127.0.0.1:1") }
            let empty = try #require(throws: ZMQError.self) { try socket.send([] as [[UInt8]]) }
            #expect(empty.code == .invalidArgument)
            let taken = try ZMQSocket(.router, context: context)
            let endpoint = uniqueInprocEndpoint()
            try taken.bind(endpoint)
            let inUse = try #require(throws: ZMQError.self) { try socket.bind(endpoint) }
            #expect(inUse.code == .addressInUse)
        }
    }

    @Test func unbindAndDisconnectUndoBindAndConnect() async throws {
        try await onDedicatedThread {
            let context = try ZMQContext()
            let server = try ZMQSocket(.router, context: context)
            try server.bind("tcp://127.0.0.1:*")
            let endpoint = try server.lastEndpoint
            let client = try ZMQSocket(.dealer, context: context)
            try client.connect(endpoint)
            try client.disconnect(endpoint)
            #expect(throws: ZMQError.self) { try client.disconnect(endpoint) }
            try server.unbind(endpoint)
            #expect(throws: ZMQError.self) { try server.unbind(endpoint) }
            // The port is free again once the I/O thread has closed the listener, which happens asynchronously.
            let other = try ZMQSocket(.router, context: context)
            let deadline = ContinuousClock.now.advanced(by: patience)
            var rebound = false
            while !rebound && ContinuousClock.now < deadline {
                do {
                    try other.bind(endpoint)
                    rebound = true
                } catch let error as ZMQError where error.code == .addressInUse {
                    Thread.sleep(forTimeInterval: 0.01)
                }
            }
            #expect(rebound)
        }
    }

    @Test func contextShutdownWakesABlockedReceiveWithTermination() async throws {
        let context = try ZMQContext()
        let blocked = Atomic<Bool>(false)
        async let outcome = onDedicatedThread { () throws -> ZMQError? in
            let socket = try ZMQSocket(.pull, context: context)
            try socket.bind(uniqueInprocEndpoint())
            blocked.store(true, ordering: .releasing)
            do {
                _ = try socket.receive()
                return nil
            } catch let error as ZMQError {
                socket.close()
                return error
            }
        }
        while !blocked.load(ordering: .acquiring) { try await Task.sleep(for: .milliseconds(5)) }
        try await Task.sleep(for: .milliseconds(20))
        context.shutdown()
        let result = try await outcome
        let error = try #require(result)
        #expect(error.isTerminated)
        #expect(context.isShutDown)
        #expect(throws: ZMQError.self) { try ZMQSocket(.pair, context: context) }
    }
}
