import Synchronization
import Testing
import ZeroMQ

@Suite(.enabled(if: ZeroMQVersion.hasCurve, "libzmq was built without CURVE"), .timeLimit(.minutes(1)))
struct CurveTests {
    @Test func keyPairsAreZ85AndDerivable() throws {
        let pair = try CurveKeyPair.generate()
        #expect(pair.publicKey.utf8.count == 40)
        #expect(pair.secretKey.utf8.count == 40)
        #expect(try CurveKeyPair.derivePublicKey(fromSecret: pair.secretKey) == pair.publicKey)
        #expect(try CurveKeyPair(secretKey: pair.secretKey) == pair)
        #expect(try CurveKeyPair.generate() != pair)
        #expect(!pair.description.contains(pair.secretKey))
        let error = try #require(throws: ZMQError.self) { try CurveKeyPair.derivePublicKey(fromSecret: "short") }
        #expect(error.code == .invalidArgument)
    }

    /// The outcome of one client's attempt against a CURVE server guarded by a ZAP handler on an IOLoop.
    struct Attempt: Sendable {
        var delivered: [String]?
        var serverEvent: MonitorRecord?
        var zapRequests: [ZAPRequest]
    }

    /// Runs a CURVE ROUTER whose ZAP handler (on an IOLoop in the same context) admits only `admitted`, and lets
    /// one DEALER with `clientKeys` connect using `serverKeyGivenToClient` and say hello.
    func attempt(clientKeys: CurveKeyPair, admitted: Set<String>, serverKeys: CurveKeyPair,
                 serverKeyGivenToClient: String, expecting event: MonitorEvent) async throws -> Attempt {
        let context = try ZMQContext()
        let loop = try IOLoop(context: context, name: "zap")
        let requests = Mutex<[ZAPRequest]>([])
        try await loop.run { scope in
            _ = try scope.serveZAP { request in
                requests.withLock { $0.append(request) }
                guard let key = request.curvePublicKey, admitted.contains(key) else {
                    return .deny(request, statusText: "key not listed")
                }
                return .allow(request, userID: key)
            }
        }
        let outcome = try await onDedicatedThread {
            let server = try ZMQSocket(.router, context: context)
            try server.set(.curveServer, to: true)
            try server.set(.curveSecretKey, to: serverKeys.secretKey)
            try server.set(.zapDomain, to: "fluxbus")
            let events = try server.monitor()
            try server.bind("tcp://127.0.0.1:*")

            let client = try ZMQSocket(.dealer, context: context)
            try client.set(.curveServerKey, to: serverKeyGivenToClient)
            try client.set(.curvePublicKey, to: clientKeys.publicKey)
            try client.set(.curveSecretKey, to: clientKeys.secretKey)
            try client.connect(try server.lastEndpoint)
            try client.send(bytes("hello"))

            let record = try events.receive(until: { $0.event == event }, timeout: patience)
            let delivered = try server.receive(timeout: event == .handshakeSucceeded ? patience : quietPeriod)
            return Attempt(delivered: strings(delivered), serverEvent: record, zapRequests: [])
        }
        await loop.shutdown()
        return Attempt(delivered: outcome.delivered, serverEvent: outcome.serverEvent,
                       zapRequests: requests.withLock { $0 })
    }

    @Test func listedClientKeyIsAdmitted() async throws {
        let (server, client) = (try CurveKeyPair.generate(), try CurveKeyPair.generate())
        let result = try await attempt(clientKeys: client, admitted: [client.publicKey], serverKeys: server,
                                       serverKeyGivenToClient: server.publicKey, expecting: .handshakeSucceeded)
        #expect(result.serverEvent?.event == .handshakeSucceeded)
        #expect(result.delivered?.last == "hello")
        let request = try #require(result.zapRequests.first)
        #expect(request.mechanism == "CURVE")
        #expect(request.domain == "fluxbus")
        #expect(request.address == "127.0.0.1")
        #expect(request.curvePublicKey == client.publicKey)
    }

    @Test func unlistedClientKeyIsRefusedByTheZAPHandler() async throws {
        let (server, client) = (try CurveKeyPair.generate(), try CurveKeyPair.generate())
        let result = try await attempt(clientKeys: client, admitted: [], serverKeys: server,
                                       serverKeyGivenToClient: server.publicKey, expecting: .handshakeFailedAuth)
        #expect(result.serverEvent?.event == .handshakeFailedAuth)
        #expect(result.serverEvent?.value == 400)
        #expect(result.delivered == nil)
        #expect(result.zapRequests.first?.curvePublicKey == client.publicKey)
    }

    /// Without a ZAP handler in the context, libzmq 4.3 admits every client that knows the server's public key:
    /// a coordinator must start its handler before it binds a CURVE socket.
    @Test func withoutAZAPHandlerAnyClientWithTheServerKeyIsAdmitted() async throws {
        let (server, stranger) = (try CurveKeyPair.generate(), try CurveKeyPair.generate())
        let delivered = try await onDedicatedThread {
            let context = try ZMQContext()
            let router = try ZMQSocket(.router, context: context)
            try router.set(.curveServer, to: true)
            try router.set(.curveSecretKey, to: server.secretKey)
            try router.bind("tcp://127.0.0.1:*")
            let client = try ZMQSocket(.dealer, context: context)
            try client.set(.curveServerKey, to: server.publicKey)
            try client.set(.curvePublicKey, to: stranger.publicKey)
            try client.set(.curveSecretKey, to: stranger.secretKey)
            try client.connect(try router.lastEndpoint)
            try client.send(bytes("let me in"))
            return strings(try router.receive(timeout: patience))
        }
        #expect(delivered?.last == "let me in")
    }

    @Test func wrongServerKeyFailsTheHandshake() async throws {
        let (server, client, impostor) = (try CurveKeyPair.generate(), try CurveKeyPair.generate(),
                                          try CurveKeyPair.generate())
        let result = try await attempt(clientKeys: client, admitted: [client.publicKey], serverKeys: server,
                                       serverKeyGivenToClient: impostor.publicKey,
                                       expecting: .handshakeFailedProtocol)
        #expect(result.serverEvent?.event == .handshakeFailedProtocol)
        #expect(result.delivered == nil)
        #expect(result.zapRequests.isEmpty) // the server could not even read the client's HELLO
    }
}
