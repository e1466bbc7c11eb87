import Testing
import ZeroMQ

/// What the *connecting* side of a failed handshake sees in libzmq (4.3.4): which misconfiguration gives a definite
/// verdict (AUTH, PROTOCOL), which only a dropped connection (NO_DETAIL), and which reconnects. `HandshakeWatch` (in
/// FluxBusClient) decides what is a refusal from exactly these events.
@Suite(.enabled(if: ZeroMQVersion.hasCurve, "libzmq was built without CURVE"), .timeLimit(.minutes(1)))
struct ClientHandshakeEventTests {
    static let failures: Set<MonitorEvent> = [.handshakeFailedAuth, .handshakeFailedProtocol, .handshakeFailedNoDetail]

    /// Connects a DEALER set up by `configureClient` to a ROUTER set up by `configureServer` (a ZAP handler admits
    /// only `admitted`), and returns the client's handshake events: up to `count` failures, or those of the first
    /// second after the first failure.
    func clientEvents(
        count: Int, admitted: Set<String> = [],
        configureServer: @escaping @Sendable (ZMQSocket) throws -> Void,
        configureClient: @escaping @Sendable (ZMQSocket) throws -> Void
    ) async throws -> [MonitorRecord] {
        let context = try ZMQContext()
        let loop = try IOLoop(context: context, name: "zap")
        try await loop.run { scope in
            _ = try scope.serveZAP { request in
                guard let key = request.curvePublicKey, admitted.contains(key) else {
                    return .deny(request, statusText: "key not listed")
                }
                return .allow(request, userID: key)
            }
        }
        let records = try await onDedicatedThread {
            let server = try ZMQSocket(.router, context: context)
            defer { server.close() }
            try server.set(.linger, to: .zero)
            try configureServer(server)
            try server.bind("tcp://127.0.0.1:*")
            let client = try ZMQSocket(.dealer, context: context)
            defer { client.close() }
            try client.set(.linger, to: .zero)
            try configureClient(client)
            let events = try client.monitor()
            try client.connect(try server.lastEndpoint)
            var records: [MonitorRecord] = []
            var deadline = ContinuousClock.now.advanced(by: patience)
            while records.filter({ Self.failures.contains($0.event) }).count < count {
                let left = ContinuousClock.now.duration(to: deadline)
                guard left > .zero, let record = try events.receive(timeout: left) else { break }
                guard Self.failures.contains(record.event) || record.event == .handshakeSucceeded else { continue }
                // After the first failure, ten reconnect intervals (100 ms each) are enough to see libzmq retry.
                if records.isEmpty { deadline = ContinuousClock.now.advanced(by: .seconds(1)) }
                records.append(record)
            }
            return records
        }
        await loop.shutdown()
        context.shutdown()
        return records
    }

    static func curveServer(_ keys: CurveKeyPair) -> @Sendable (ZMQSocket) throws -> Void {
        { server in
            try server.set(.curveServer, to: true)
            try server.set(.curveSecretKey, to: keys.secretKey)
            try server.set(.zapDomain, to: "fluxbus")
        }
    }

    static func curveClient(serverKey: String, keys: CurveKeyPair) -> @Sendable (ZMQSocket) throws -> Void {
        { client in
            try client.set(.curveServerKey, to: serverKey)
            try client.set(.curvePublicKey, to: keys.publicKey)
            try client.set(.curveSecretKey, to: keys.secretKey)
        }
    }

    /// The server cannot read a HELLO sealed for another key, and closes the connection without a word: the client
    /// sees only a dropped connection, as when the server dies mid-handshake, and libzmq reconnects again and again.
    @Test func aWrongServerKeyLooksToTheClientLikeADroppedConnection() async throws {
        let (server, client, impostor) = (try CurveKeyPair.generate(), try CurveKeyPair.generate(), try CurveKeyPair.generate())
        let records = try await clientEvents(
            count: 3, admitted: [client.publicKey], configureServer: Self.curveServer(server),
            configureClient: Self.curveClient(serverKey: impostor.publicKey, keys: client))
        #expect(records.map(\.event) == Array(repeating: .handshakeFailedNoDetail, count: 3), "\(records)")
    }

    /// A key the ZAP handler does not list: the server says so (an ERROR command), a definite verdict; libzmq does
    /// not try that endpoint again.
    @Test func anUnlistedClientKeyIsAnAuthVerdict() async throws {
        let (server, client) = (try CurveKeyPair.generate(), try CurveKeyPair.generate())
        let records = try await clientEvents(
            count: 2, configureServer: Self.curveServer(server),
            configureClient: Self.curveClient(serverKey: server.publicKey, keys: client))
        #expect(records.map(\.event) == [.handshakeFailedAuth], "\(records)")
        #expect(records.first?.value == 400)
    }

    /// Plain text against CURVE, either way round: the greetings name different mechanisms, a definite verdict.
    @Test(arguments: [true, false])
    func plainTextAgainstCurveIsAProtocolVerdict(serverUsesCurve: Bool) async throws {
        let (server, client) = (try CurveKeyPair.generate(), try CurveKeyPair.generate())
        let plain: @Sendable (ZMQSocket) throws -> Void = { _ in }
        let records = try await clientEvents(
            count: 2, admitted: [client.publicKey],
            configureServer: serverUsesCurve ? Self.curveServer(server) : plain,
            configureClient: serverUsesCurve ? plain : Self.curveClient(serverKey: server.publicKey, keys: client))
        #expect(records.map(\.event) == [.handshakeFailedProtocol], "\(records)")
    }
}
