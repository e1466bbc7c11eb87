import Dispatch
import Flux
import FluxBusProtocol
import Testing

@testable import FluxBus

/// A store whose handler blocks until the test opens its gate: a handler that runs as long as the test wants.
final class HeldStore: Store {
    struct Hold: Codable, Sendable {}
    static let hold = ActionType<Hold>("held.hold")
    /// Signalled when the handler begins; the handler waits on `gate`.
    static let entered = DispatchSemaphore(value: 0)
    static let gate = DispatchSemaphore(value: 0)

    static let name = "held"
    static let handlers = Handlers<HeldStore>()
        .on(hold) { store, _, _ in
            entered.signal()
            gate.wait()
            store.state += 1
        }

    var state = 0
    init() {}
}

/// The library's side of a long handler: `Worker.run()` keeps the worker live while the handler blocks, and a stop
/// returns from `run()` without waiting for it; when the handler finally returns, nothing it caused leaves the worker.
@Suite("A worker stopped during a handler", .timeLimit(.minutes(1)))
struct StopDuringHandlerTests {
    static func waitUntilEntered() async throws {
        while HeldStore.entered.wait(timeout: .now()) == .timedOut { try await Task.sleep(for: .milliseconds(10)) }
    }

    @Test func runReturnsWithoutWaitingForTheHandlerAndNothingItCausedLeaves() async throws {
        let bus = try await TestBus()
        let (worker, running) = bus.startWorker("w1", [HostedStore(HeldStore.self)])
        let client = try await bus.client()
        try await bus.waitUntilLive(1, client: client)
        let dispatch = Task { try await client.dispatch(Action(HeldStore.hold, .init()), requestID: "held") }
        try await Self.waitUntilEntered()

        // Past the liveness deadline (four 250 ms heartbeats), the worker is still live.
        try await Task.sleep(for: TestBus.heartbeat * 4 + .milliseconds(750))
        #expect(try await client.status().workers.map(\.state) == [.live])

        // If run() waited for the handler, which waits for the gate, this would never return.
        worker.stop()
        try await running.value
        let result = try await dispatch.value
        #expect(result.outcomes.map(\.status) == [.unknown], "\(result.outcomes)")
        #expect(try await client.status().workers.map(\.state) == [.gone])

        // The handler returns now; its ACK must never go out: asked again, the outcome is still unknown.
        HeldStore.gate.signal()
        try await Task.sleep(for: .milliseconds(500))
        let again = try await client.dispatch(Action(HeldStore.hold, .init()), requestID: "held")
        #expect(again.sequence == result.sequence && again.outcomes.map(\.status) == [.unknown], "\(again.outcomes)")
        await client.close()
        await bus.stop()
    }
}
