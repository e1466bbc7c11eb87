import Dispatch
import Flux
import FluxBusProtocol
import Synchronization
import Testing
import ZeroMQ

@testable import FluxBus

/// Requests from several clients overlap (`CoordinatorConfiguration.maxInFlight`): a request starts while the one
/// before is still in flight, and `--max-in-flight 1` keeps DESIGN.md's lock step. What a subscriber of the real PUB
/// socket receives shows which.
@Suite("Requests in flight together", .serialized, .timeLimit(.minutes(1)))
struct PipelinedRequestsTests {
    /// The ACTIONs and COMPLETEDs published, in order, as "A1", "C1", …, heard by a subscriber on its own thread.
    final class Stream: Sendable {
        private let heard = Mutex<[String]>([])
        private let stopping = Atomic(false)
        let subscribed = Atomic(false)

        var items: [String] { heard.withLock { $0 } }

        func listen(context: ZMQContext, endpoint: String) -> Task<Void, any Error> {
            Task {
                try await onDedicatedThread { [self] in
                    let subscriber = try ZMQSocket(.sub, context: context)
                    defer { subscriber.close() }
                    try subscriber.subscribe(Codec.signature)
                    try subscriber.connect(endpoint)
                    while !stopping.load(ordering: .acquiring) {
                        guard let frames = try subscriber.receive(timeout: .milliseconds(50)) else { continue }
                        subscribed.store(true, ordering: .releasing)
                        for message in try Codec().decodeAll(frames) {
                            switch message {
                            case .action(let action): heard.withLock { $0.append("A\(action.sequence)") }
                            case .completed(let completed): heard.withLock { $0.append("C\(completed.sequence)") }
                            default: break
                            }
                        }
                    }
                }
            }
        }

        func stop() { stopping.store(true, ordering: .releasing) }
    }

    static func waitUntil(_ condition: () async throws -> Bool) async throws {
        for _ in 0..<500 where try await !condition() { try await Task.sleep(for: .milliseconds(10)) }
    }

    /// Two clients each dispatch one action while the first is held in its handler (``GateStore``). Returns what the
    /// subscriber heard, and the store's state (how many it handled).
    static func twoRequests(maxInFlight: Int) async throws -> (heard: [String], whileHeld: [String], state: Int) {
        let bus = try await TestBus { $0.maxInFlight = maxInFlight }
        let (first, second) = (try await bus.client(), try await bus.client())
        let worker = bus.startWorker("w1", [HostedStore(GateStore.self)]).worker
        try await bus.waitUntilLive(1, client: first)
        let stream = Stream()
        let listening = stream.listen(context: bus.context, endpoint: try await bus.coordinator.endpoints.publish)
        // The subscription holds once a HEARTBEAT arrives (the idle coordinator beats every 250 ms).
        try await waitUntil { stream.subscribed.load(ordering: .acquiring) }

        let gate = GateStore.gate("pipelined-\(maxInFlight)")
        async let one = first.dispatch(Action(GateStore.hold, .init(gate: "pipelined-\(maxInFlight)")))
        try await waitUntil { stream.items.contains("A1") }
        async let two = second.dispatch(Action(GateStore.hold, .init(gate: "pipelined-\(maxInFlight)")))
        // Both accepted: the first in flight, held; the second in flight too, or queued behind it.
        try await waitUntil { try await first.status().queueLength >= 2 }
        if maxInFlight > 1 { try await waitUntil { stream.items.contains("A2") } }
        let whileHeld = stream.items
        gate.opened.signal()
        gate.opened.signal()
        let results = try await (one, two)
        #expect(results.0.sequence == 1 && results.1.sequence == 2)
        try await waitUntil { stream.items.contains("C2") }
        stream.stop()
        try await listening.value
        let state = try await first.state(of: GateStore.self)
        _ = worker
        for client in [first, second] { await client.close() }
        await bus.stop()
        return (stream.items, whileHeld, state)
    }

    /// The second request's ACTION goes out while the first is still held in its handler; the worker applies both in
    /// order, and each client gets its own sequence.
    @Test func aSecondRequestStartsWhileTheFirstIsInFlight() async throws {
        let (heard, whileHeld, state) = try await Self.twoRequests(maxInFlight: 4_096)
        #expect(whileHeld == ["A1", "A2"], "published while #1 was held: \(whileHeld)")
        #expect(heard == ["A1", "A2", "C1", "C2"])
        #expect(state == 2)
    }

    /// With one dispatch in flight at most, the second request starts only once the first completed.
    @Test func maxInFlightOneKeepsTheLockStep() async throws {
        let (heard, whileHeld, state) = try await Self.twoRequests(maxInFlight: 1)
        #expect(whileHeld == ["A1"], "published while #1 was held: \(whileHeld)")
        #expect(heard == ["A1", "C1", "A2", "C2"])
        #expect(state == 2)
    }
}
