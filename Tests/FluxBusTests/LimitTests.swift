import Flux
import FluxBusProtocol
import FluxStores
import Testing

@testable import FluxBus

@Suite("Join limits", .timeLimit(.minutes(1)))
struct LimitTests {
    @Test func aWorkerWithTooManyStoresOrOneWorkerTooManyIsRefused() async throws {
        let bus = try await TestBus {
            $0.maxStoresPerWorker = 1
            $0.maxWorkers = 1
        }
        let client = try await bus.client()
        let (wide, wideTask) = bus.startWorker("wide", [HostedStore(KVStore.self, name: "a"), HostedStore(KVStore.self, name: "b")])
        let error = await #expect(throws: BusError.self) { try await wideTask.value }
        #expect(error?.message.contains("at most 1 per worker") == true)
        var refusals: [Message.Reject.Code] = []
        for await event in wide.events { if case .rejected(let code, _) = event { refusals.append(code) } }
        #expect(refusals == [.tooMany])

        bus.startWorker("first", [HostedStore(CounterStore.self)])
        try await bus.waitUntilLive(1, client: client)
        let (_, secondTask) = bus.startWorker("second", [HostedStore(CounterStore.self)])
        let second = await #expect(throws: BusError.self) { try await secondTask.value }
        #expect(second?.message.contains("its limit") == true)
        #expect(try await client.status().workers.map(\.id) == ["first"])
        await client.close()
        await bus.stop()
    }
}
