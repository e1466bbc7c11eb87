import Flux
import Foundation
import FluxBusProtocol
import FluxStores
import Testing
import ZeroMQ

@testable import FluxBus

@Suite("Raw peers: what the coordinator answers to hand-made messages", .timeLimit(.minutes(1)))
struct RawPeerTests {
    /// Sends one message from a DEALER with the given routing id (or none) and returns the first answer.
    static func exchange(_ message: Message, routingID: String?, on bus: TestBus) async throws -> Message? {
        try await exchange(frames: Codec().encode(message), routingID: routingID, on: bus)
    }

    /// Sends raw frames and returns the first answer, decoded.
    static func exchange(frames: [[UInt8]], routingID: String?, on bus: TestBus) async throws -> Message? {
        let (context, endpoint) = (bus.context, bus.control)
        return try await onDedicatedThread {
            let dealer = try ZMQSocket(.dealer, context: context)
            defer { dealer.close() }
            try dealer.set(.linger, to: .zero)
            if let routingID { try dealer.set(.routingID, to: Array(routingID.utf8)) }
            try dealer.connect(endpoint)
            _ = try dealer.send(frames)
            guard let answer = try dealer.receive(timeout: .seconds(5)) else { return nil }
            return try Codec().decode(answer)
        }
    }

    static func hello(_ workerID: String) -> Message {
        .hello(.init(workerID: workerID, instance: 42, stores: [
            StoreDeclaration(name: "counter", dependsOn: [], handlesAll: false, handles: ["counter.add"], lastApplied: 0),
        ]))
    }

    /// PROTOCOL.md, routing ids: "The coordinator MUST refuse a HELLO whose `workerID` is not the routing id it
    /// arrived with (REJECT code 4)."
    @Test(arguments: [nil, "someone-else", "w1x/2a", "w1/"])
    func aHelloFromAnotherRoutingIDIsRefused(routingID: String?) async throws {
        let bus = try await TestBus()
        let client = try await bus.client()
        let answer = try await Self.exchange(Self.hello("w1"), routingID: routingID, on: bus)
        guard case .reject(let reject) = answer else {
            Issue.record("expected REJECT, got \(String(describing: answer))")
            await client.close()
            await bus.stop()
            return
        }
        #expect(reject.code == .invalidDeclaration)
        #expect(reject.reason.contains("w1"))
        #expect(try await client.status().workers.isEmpty)
        await client.close()
        await bus.stop()
    }

    /// The same HELLO from the matching routing id (the worker id, or the id, `/` and a suffix) is welcomed, with the
    /// bus's epoch and publish endpoint.
    @Test(arguments: ["w1", "w1/2a"])
    func aHelloFromItsOwnRoutingIDIsWelcomed(routingID: String) async throws {
        let bus = try await TestBus()
        let client = try await bus.client()
        let answer = try await Self.exchange(Self.hello("w1"), routingID: routingID, on: bus)
        guard case .welcome(let welcome) = answer else {
            Issue.record("expected WELCOME, got \(String(describing: answer))")
            await client.close()
            await bus.stop()
            return
        }
        let status = try await client.status()
        #expect(welcome.epoch == status.epoch)
        #expect(welcome.sequence == 0)
        #expect(welcome.publishEndpoint == status.publishEndpoint)
        #expect(welcome.heartbeatMillis == UInt32(TestBus.heartbeat.components.attoseconds / 1_000_000_000_000_000))
        #expect(welcome.deadlineMillis == welcome.heartbeatMillis * UInt32(BusDefaults.livenessIntervals))
        #expect(status.worker("w1")?.state == .catchingUp)
        await client.close()
        await bus.stop()
    }

    /// Another instance claiming a worker id that a registration holds is told the id is busy (retry), with the id
    /// and where its holder is, and the holder keeps its registration.
    @Test func anotherInstanceClaimingAHeldIDIsToldItIsBusy() async throws {
        let bus = try await TestBus()
        let client = try await bus.client()
        guard case .welcome = try await Self.exchange(Self.hello("w1"), routingID: "w1/2a", on: bus) else {
            Issue.record("the first instance was not welcomed")
            await client.close()
            await bus.stop()
            return
        }
        let claim = Message.hello(.init(workerID: "w1", instance: 43, stores: [
            StoreDeclaration(name: "counter", dependsOn: [], handlesAll: false, handles: ["counter.add"], lastApplied: 0),
        ]))
        let answer = try await Self.exchange(claim, routingID: "w1/2b", on: bus)
        guard case .reject(let reject) = answer else {
            Issue.record("expected REJECT, got \(String(describing: answer))")
            await client.close()
            await bus.stop()
            return
        }
        #expect(reject.code == .workerIDBusy)
        #expect(reject.reason.contains("worker id `w1` is held by a live process at an address the transport does not report (inproc://) (instance 42"), "\(reject.reason)")
        #expect(try await client.status().worker("w1")?.state == .catchingUp)
        await client.close()
        await bus.stop()
    }

    /// A worker the coordinator does not know that heartbeats is told to join again.
    @Test func aHeartbeatFromAStrangerIsAnsweredWithGoodbye() async throws {
        let bus = try await TestBus()
        let answer = try await Self.exchange(.heartbeat(.init(epoch: 7, sequence: 3)), routingID: "ghost", on: bus)
        guard case .goodbye(let goodbye) = answer else {
            Issue.record("expected GOODBYE, got \(String(describing: answer))")
            await bus.stop()
            return
        }
        #expect(goodbye.reason.contains("HELLO"))
        await bus.stop()
    }

    /// A peer speaking another protocol version gets REJECT code 1 in this version, naming both.
    @Test func anotherProtocolVersionIsRefused() async throws {
        let bus = try await TestBus()
        var frames = Codec().encode(Self.hello("w1"))
        frames[0][4] = 2
        let answer = try await Self.exchange(frames: frames, routingID: "w1", on: bus)
        guard case .reject(let reject) = answer else {
            Issue.record("expected REJECT, got \(String(describing: answer))")
            await bus.stop()
            return
        }
        #expect(reject.code == .versionMismatch)
        #expect(reject.reason.contains("version \(Codec.version)") && reject.reason.contains("not 2"))
        let client = try await bus.client()
        #expect(try await client.status().workers.isEmpty)
        await client.close()
        await bus.stop()
    }
}
