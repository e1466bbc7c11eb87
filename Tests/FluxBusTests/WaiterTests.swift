import Flux
import Foundation
import FluxBusProtocol
import Synchronization
import Testing
import ZeroMQ

@testable import FluxBus

/// A store whose handler waits until the test opens its gate: the dispatch stays in flight, with no clock involved,
/// for as long as the test needs.
final class GateStore: Store {
    struct Hold: Codable, Sendable, Hashable {
        var gate: String
    }

    /// One gate per test, by name: entered when the handler starts, opened by the test.
    final class Gate: Sendable {
        let entered = DispatchSemaphore(value: 0)
        let opened = DispatchSemaphore(value: 0)
    }

    private static let gates = Mutex<[String: Gate]>([:])

    static func gate(_ name: String) -> Gate {
        gates.withLock { gates in
            if let gate = gates[name] { return gate }
            let gate = Gate()
            gates[name] = gate
            return gate
        }
    }

    static let hold = ActionType<Hold>("gate.hold")
    static let name = "gate"
    static let handlers = Handlers<GateStore>()
        .on(hold) { store, action, _ in
            let gate = GateStore.gate(action.payload.gate)
            gate.entered.signal()
            gate.opened.wait()
            store.state += 1
        }

    var state = 0
    init() {}
}

/// Every client waiting for one request id gets an answer: the result for each connection that waits, or at once a
/// busy ERROR for one past `--max-waiters-per-request`. Real ZeroMQ over `inproc://`.
@Suite("Waiters on one request id", .timeLimit(.minutes(1)))
struct WaiterTests {
    /// A bus whose worker (hosting the gate store, live) is never written off while a test holds its handler, a
    /// client, and a gate of the test's own: open it (`gate.opened.signal()`) before the test ends.
    static func patientBus(maxWaiters: Int = 1_024) async throws -> (TestBus, BusClient, gateName: String, GateStore.Gate) {
        let bus = try await TestBus {
            $0.heartbeatInterval = .seconds(10)
            $0.ackTimeout = .seconds(120)
            $0.maxWaitersPerRequest = maxWaiters
        }
        let client = try await bus.client()
        bus.startWorker("w1", [HostedStore(GateStore.self)])
        try await bus.waitUntilLive(1, client: client)
        let gateName = UUID().uuidString
        return (bus, client, gateName, GateStore.gate(gateName))
    }

    /// Sends `message` then STATUS_REQUEST on a fresh DEALER, and returns the socket once STATUS came back: the
    /// coordinator handles one connection's messages in order, so by then it has taken the DISPATCH in.
    static func sendAndSync(_ message: Message, context: ZMQContext, endpoint: String) throws -> ZMQSocket {
        let dealer = try ZMQSocket(.dealer, context: context)
        try dealer.set(.linger, to: .zero)
        try dealer.connect(endpoint)
        let codec = Codec()
        _ = try dealer.send(codec.encode(message))
        _ = try dealer.send(codec.encode(.statusRequest(.init(requestID: "sync"))))
        return dealer
    }

    /// The next answers on `dealer`, until the STATUS that `sendAndSync` asked for, and that STATUS excluded.
    static func answersBeforeSync(on dealer: ZMQSocket) throws -> [Message] {
        var answers: [Message] = []
        while let frames = try dealer.receive(timeout: .seconds(20)) {
            for message in try Codec().decodeAll(frames) {
                if case .status = message { return answers }
                answers.append(message)
            }
        }
        throw BusError(code: .unreachable, message: "no STATUS came back")
    }

    /// The next answers on `dealer` other than STATUS.
    static func nextAnswer(on dealer: ZMQSocket) throws -> [Message] {
        while let frames = try dealer.receive(timeout: .seconds(20)) {
            let got = try Codec().decodeAll(frames).filter { if case .status = $0 { false } else { true } }
            if !got.isEmpty { return got }
        }
        return []
    }

    static func holdMessage(_ gate: String, requestID: String) -> Message {
        .dispatch(.init(requestID: requestID, actionType: GateStore.hold.name, payload: Array(#"{"gate":"\#(gate)"}"#.utf8)))
    }

    @Test func twelveConnectionsWaitingOnOneRequestIDAllGetTheResult() async throws {
        let (bus, client, gateName, gate) = try await Self.patientBus()
        defer { gate.opened.signal() }
        let (context, endpoint) = (bus.context, bus.control)
        let message = Self.holdMessage(gateName, requestID: "shared")

        let (early, answers) = try await onDedicatedThread { () -> ([[Message]], [[Message]]) in
            let first = try Self.sendAndSync(message, context: context, endpoint: endpoint)
            gate.entered.wait()  // the dispatch is in flight: its handler runs
            let dealers = try (0..<12).map { _ in try Self.sendAndSync(message, context: context, endpoint: endpoint) }
            let early = try dealers.map { try Self.answersBeforeSync(on: $0) }
            gate.opened.signal()
            let answers = try ([first] + dealers).map { dealer in
                defer { dealer.close() }
                return try Self.nextAnswer(on: dealer)
            }
            return (early, answers)
        }
        #expect(early.allSatisfy { $0.isEmpty }, "a waiter was answered before the dispatch completed: \(early)")
        let sequences = answers.map { answer -> UInt64? in
            guard case .result(let result)? = answer.first, result.requestID == "shared" else { return nil }
            return result.sequence
        }
        #expect(sequences.count == 13)
        #expect(sequences.allSatisfy { $0 != nil }, "every waiter gets the RESULT: \(answers)")
        #expect(Set(sequences).count == 1, "one dispatch for all of them")
        #expect(try decode(Int.self, try await client.state(of: "gate")) == 1, "applied once")
        await client.close()
        await bus.stop()
    }

    @Test func oneWaiterPastTheLimitIsRefusedAsBusyAndTheOthersGetTheResult() async throws {
        let (bus, client, gateName, gate) = try await Self.patientBus(maxWaiters: 3)
        defer { gate.opened.signal() }
        let (context, endpoint) = (bus.context, bus.control)
        let message = Self.holdMessage(gateName, requestID: "limited")

        let (answers, extra) = try await onDedicatedThread { () -> ([Message], [Message]) in
            let first = try Self.sendAndSync(message, context: context, endpoint: endpoint)
            gate.entered.wait()
            // The first connection sending again is still one waiter; two more fill the limit of three.
            _ = try first.send(Codec().encode(message))
            let dealers = try (0..<2).map { _ in try Self.sendAndSync(message, context: context, endpoint: endpoint) }
            let early = try dealers.flatMap { try Self.answersBeforeSync(on: $0) }
            let fourth = try Self.sendAndSync(message, context: context, endpoint: endpoint)
            defer { fourth.close() }
            let extra = try Self.answersBeforeSync(on: fourth)
            gate.opened.signal()
            let answers = try ([first] + dealers).flatMap { dealer in
                defer { dealer.close() }
                return try Self.nextAnswer(on: dealer)
            }
            return (early + answers, extra)
        }
        guard case .error(let refusal)? = extra.first else {
            Issue.record("the fourth waiter was not refused at once: \(extra)")
            return
        }
        #expect(refusal.requestID == "limited")
        #expect(refusal.code == .busy)
        #expect(refusal.message.contains("3 connections already wait for request id `limited`"))
        let results = answers.compactMap { if case .result(let result) = $0 { result } else { nil } }
        #expect(results.count == 3, "each waiting connection is answered once: \(answers)")
        #expect(Set(results.map(\.sequence)).count == 1)
        await client.close()
        await bus.stop()
    }

    /// One client sending one request id twice at once: the coordinator answers a connection once, so the second
    /// call is refused at once instead of waiting for an answer that cannot come; the first gets the result.
    @Test func theSameRequestIDTwiceAtOnceOnOneClientIsRefusedNotLeftWaiting() async throws {
        let (bus, client, gateName, gate) = try await Self.patientBus()
        defer { gate.opened.signal() }
        let payload = Array(#"{"gate":"\#(gateName)"}"#.utf8)
        let first = Task { try await client.dispatch(GateStore.hold.name, payload: payload, requestID: "twice") }
        _ = try await onDedicatedThread { gate.entered.wait() }
        let second = await #expect(throws: BusError.self) {
            try await client.dispatch(GateStore.hold.name, payload: payload, requestID: "twice")
        }
        #expect(second?.code == .usage)
        #expect(second?.message.contains("request id `twice` is already waiting for an answer on this client") == true)
        gate.opened.signal()
        #expect(try await first.value.sequence == 1)
        await client.close()
        await bus.stop()
    }
}
