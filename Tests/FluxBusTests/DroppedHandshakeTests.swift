import Foundation
import FluxBusClient
import FluxBusProtocol
import FluxStores
import Synchronization
import Testing
import ZeroMQ

@testable import FluxBus

/// A connection that drops mid-handshake (a coordinator that died, or crash-loops) is no refusal: requests end as
/// they do when the coordinator is down, and clients and workers go on once a coordinator is there. And a refusal
/// that comes after a request was sent leaves that request's outcome unknown, never "not applied".
@Suite("Dropped and refused handshakes", .timeLimit(.minutes(1)))
struct DroppedHandshakeTests {
    /// The bus's control and publish endpoints in a fresh directory under /tmp (monitors see no `inproc://` events).
    static func endpoints() throws -> (directory: String, control: String, publish: String) {
        let directory = try DroppingListener.temporaryDirectory()
        return (directory, "ipc://\(directory)/c.sock", "ipc://\(directory)/p.sock")
    }

    @Test func aClientWhoseHandshakesAreCutOffIsNotRefusedAndGoesOnOnceACoordinatorIsThere() async throws {
        let (directory, control, publish) = try Self.endpoints()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let listener = try DroppingListener(path: "\(directory)/c.sock")
        let client = try await BusClient(endpoint: control, timeout: .seconds(10))
        let pending = Task { await ClientRequestTests.failure(of: client, timeout: .seconds(3)) }
        let dropped = await listener.waitUntilDropped(3)
        let failure = await pending.value
        listener.stop()
        #expect(dropped, "the listener never saw the client connect")
        #expect(failure?.code == .unreachable, "\(String(describing: failure))")
        #expect(failure?.message.contains("no answer from the coordinator") == true)

        let bus = try await TestBus { $0.controlEndpoint = control; $0.publishEndpoint = publish }
        let status: Result<Message.Status, any Error>
        do { status = .success(try await client.status()) } catch { status = .failure(error) }
        #expect((try? status.get()) != nil, "\(status)")
        await client.close()
        await bus.stop()
    }

    @Test func aWorkerWhoseHandshakesAreCutOffKeepsTryingAndJoins() async throws {
        let (directory, control, publish) = try Self.endpoints()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let listener = try DroppingListener(path: "\(directory)/c.sock")
        let worker = Worker(
            configuration: .init(id: "w1", coordinator: control, stores: [HostedStore(PriceStore.self)],
                                 heartbeatInterval: TestBus.heartbeat),
            logger: TestBus.logger("worker.w1"))
        let stopped = Mutex<(any Error)?>(nil)
        let running = Task {
            do { try await worker.run() } catch {
                stopped.withLock { $0 = error }
                throw error
            }
        }
        #expect(await listener.waitUntilDropped(3), "the listener never saw the worker connect")
        listener.stop()

        let bus = try await TestBus { $0.controlEndpoint = control; $0.publishEndpoint = publish }
        let client = try await bus.client()
        var joined: (any Error)?
        do { try await bus.waitUntilLive(1, client: client) } catch { joined = error }
        #expect(joined == nil, "the worker did not join: \(String(describing: stopped.withLock { $0 }))")
        #expect(stopped.withLock { $0 } == nil)
        await client.close()
        running.cancel()
        _ = await running.result
        await bus.stop()
    }
}

/// A real verdict (the coordinator's ZAP handler refuses the key) after a request went out over an earlier
/// connection: that request's outcome is unknown, a later one is refused.
@Suite("A refusal after a request was sent", .enabled(if: ZeroMQVersion.hasCurve), .timeLimit(.minutes(1)))
struct RefusalAfterSendingTests {
    @Test func theRequestInFlightIsUnknownAndOnlyLaterOnesAreRefused() async throws {
        let (directory, control, _) = try DroppedHandshakeTests.endpoints()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (serverKeys, clientKeys) = (try CurveKeyPair.generate(), try CurveKeyPair.generate())
        let context = try ZMQContext()
        let admits = Mutex(true)
        let zap = try IOLoop(context: context, name: "zap")
        try await zap.run { scope in
            _ = try scope.serveZAP { request in
                admits.withLock { $0 } ? .allow(request, userID: "ops") : .deny(request, statusText: "key not listed")
            }
        }
        // The coordinator, played by hand: it admits the key and takes the request without answering, then goes,
        // and the one on the same endpoint after it refuses the key.
        let finished = Mutex(false)
        let server = PeerScript<Bool> {
            func router() throws -> ZMQSocket {
                let router = try ZMQSocket(.router, context: context)
                try router.set(.linger, to: .zero)
                try router.set(.curveServer, to: true)
                try router.set(.curveSecretKey, to: serverKeys.secretKey)
                try router.set(.zapDomain, to: CoordinatorSecurity.domain)
                do {
                    try router.bind(control)
                } catch {
                    router.close()
                    throw error
                }
                return router
            }
            let first = try router()
            let received = try first.receive(timeout: .seconds(20)) != nil
            first.close()
            admits.withLock { $0 = false }
            // libzmq lets go of the path on its reaper thread, a little after the close: until then a bind there is
            // refused as in use (ZMQSocket.bind), as a successor process's would be while the first one still runs.
            var successor: ZMQSocket?
            for _ in 0..<250 where successor == nil {
                successor = try? router()
                if successor == nil { Thread.sleep(forTimeInterval: 0.02) }
            }
            let second = try successor ?? router()
            while !finished.withLock({ $0 }) { _ = try second.receive(timeout: .milliseconds(20)) }
            second.close()
            return received
        }
        let client = try await BusClient(
            endpoint: control, timeout: .seconds(20),
            security: PeerSecurity(serverPublicKey: serverKeys.publicKey, keyPair: clientKeys))
        let inFlight = await ClientRequestTests.failure(of: client, timeout: nil)
        let later = await ClientRequestTests.failure(of: client, timeout: nil)
        finished.withLock { $0 = true }
        #expect(try await server.value(), "the first coordinator never received the request")
        #expect(inFlight?.code == .unreachable, "\(String(describing: inFlight))")
        #expect(inFlight?.message.contains("refused this key") == true)
        #expect(inFlight?.message.contains("outcome is unknown") == true)
        #expect(later?.code == .refused, "\(String(describing: later))")
        #expect(later?.message.contains("refused this key") == true)
        await client.close()
        await zap.shutdown()
        context.shutdown()
    }
}
