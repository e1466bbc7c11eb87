import Flux
import Foundation
import FluxBusProtocol
import FluxStores
import Testing

@testable import FluxBus

@Suite("Distributed bus, in process over inproc://", .timeLimit(.minutes(1)))
struct BusTests {
    @Test func theFlightChainRunsAcrossThreeWorkers() async throws {
        let bus = try await TestBus()
        let client = try await bus.client()
        bus.startWorker("w-price", [HostedStore(PriceStore.self)])
        bus.startWorker("w-city", [HostedStore(CityStore.self)])
        bus.startWorker("w-country", [HostedStore(CountryStore.self)])
        try await bus.waitUntilLive(3, client: client)

        let result = try await client.dispatch(Action(Flight.countryUpdate, .init(country: "Japan")))
        #expect(result.succeeded)
        #expect(result.stores.map(\.name) == ["country", "city", "price"])
        #expect(result.outcomes.map(\.worker) == ["w-country", "w-city", "w-price"])

        let price = try await client.state(of: "price")
        let state = try JSONDecoder().decode(PriceStore.State.self, from: Data(price.state))
        #expect(state == .init(country: "Japan", city: "Tokyo", price: Flight.price(country: "Japan", city: "Tokyo")))
        #expect(price.worker == "w-price")
        #expect(price.sequence == result.sequence)

        let failing = try await client.dispatch(Action(Flight.countryUpdate, .init(country: "Atlantis")))
        #expect(!failing.succeeded)
        #expect(failing.stores.map(\.status) == [.ok, .failed, .skipped])
        #expect(failing.stores[2].error == "waits for `city`, which failed")

        let next = try await client.dispatch(Action(Flight.cityUpdate, .init(city: "Osaka")))
        #expect(next.succeeded)
        #expect(next.sequence == failing.sequence + 1)
        await client.close()
        await bus.stop()
    }

    @Test func aWorkerStoppedGracefullySaysGoodbyeAndItsStateReadsTyped() async throws {
        let bus = try await TestBus()
        let client = try await bus.client()
        let (worker, task) = bus.startWorker("w1", [HostedStore(CounterStore.self)])
        try await bus.waitUntilLive(1, client: client)
        try await client.dispatch(Action(CounterStore.add, .init(by: 5)))
        #expect(try await client.state(of: CounterStore.self) == .init(value: 5))

        worker.stop()
        try await task.value
        #expect(try await client.status().workers.first?.state == .gone)
        await client.close()
        await bus.stop()
    }
}
