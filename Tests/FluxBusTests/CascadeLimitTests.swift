import Flux
import FluxBusProtocol
import FluxStores
import Testing

@testable import FluxBus

/// Dispatches `count` `counter.add` actions from its handler, each a cascade.
private final class FanoutStore: Store {
    struct Fan: Codable, Sendable { var count: Int }
    static let fan = ActionType<Fan>("fan")
    static let name = "fanout"
    static let handlers = Handlers<FanoutStore>().on(fan) { store, action, context in
        for _ in 0..<action.payload.count { try context.dispatch(Action(CounterStore.add, .init(by: 1))) }
        store.state += action.payload.count
    }
    var state = 0
}

@Suite("Cascades against the queue bound", .timeLimit(.minutes(1)))
struct CascadeLimitTests {
    @Test func cascadesAreQueuedUpToTheBoundAndTheRestAreRefusedAsBusy() async throws {
        let bus = try await TestBus { $0.queueLimit = 3 }
        let client = try await bus.client()
        let (fanout, _) = bus.startWorker("w-fan", [HostedStore(FanoutStore.self)])
        bus.startWorker("w-count", [HostedStore(CounterStore.self)])
        try await bus.waitUntilLive(2, client: client)

        let result = try await client.dispatch("fan", json: #"{"count":10}"#)
        #expect(result.succeeded)
        // The three that fit in the queue run after the fan-out, as dispatches of their own.
        var value = ""
        for _ in 0..<200 {
            value = String(decoding: try await client.state(of: "counter").state, as: UTF8.self)
            if value == #"{"value":3}"# { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(value == #"{"value":3}"#)
        #expect(try await client.status().sequence == result.sequence + 3)

        var refused = 0
        for await event in fanout.events {
            if case .cascadeRefused(_, let code, let message) = event {
                #expect(code == .busy)
                #expect(message.contains("busy"))
                refused += 1
                if refused == 7 { break }
            }
        }
        #expect(refused == 7)
        await client.close()
        await bus.stop()
    }
}
