import Flux
import Foundation
import FluxBusProtocol
import FluxStores
import Testing

@testable import FluxBus

@Suite("Joining: declarations, the global graph and refusals", .timeLimit(.minutes(1)))
struct JoiningTests {
    /// Workers join in the "wrong" order: price, then city, then country. Until a store's dependencies are on the
    /// bus it is declared but waits, and dispatches leave it out; once the chain is complete it runs.
    @Test func storesWaitForDependenciesThatJoinLater() async throws {
        let bus = try await TestBus()
        let client = try await bus.client()

        bus.startWorker("w-price", [HostedStore(PriceStore.self)])
        var status = try await client.status(until: "w-price is live") { $0.worker("w-price")?.state == .live }
        #expect(status.store("price")?.waitingFor == ["city"])
        #expect(status.store("price")?.dependsOn == ["city"])

        bus.startWorker("w-city", [HostedStore(CityStore.self)])
        status = try await client.status(until: "w-city is live") { $0.worker("w-city")?.state == .live }
        #expect(status.store("city")?.waitingFor == ["country"])
        #expect(status.store("price")?.waitingFor == ["city"])
        #expect(status.store("country") == nil)

        // Nothing that waits takes part yet: the dispatch completes at once, and the stores that handle it say they were
        // not ready, and why, rather than the dispatch reading as a success.
        let early = try await client.dispatch(Action(Flight.countryUpdate, .init(country: "Japan")))
        #expect(early.outcomes.map(\.store) == ["city", "price"])
        #expect(early.outcomes.allSatisfy { $0.status == .skipped && $0.message.hasPrefix("not ready: it waits for `country`, which no worker hosts") })
        #expect(!early.succeeded && early.verdict == "failed")
        let earlyCity = try await client.dispatch(Action(Flight.cityUpdate, .init(city: "Kyoto")))
        #expect(earlyCity.outcomes.map(\.store) == ["city", "price"])
        #expect(earlyCity.sequence == early.sequence + 1)
        let untouched = try await client.state(of: "price")
        #expect(text(untouched) == "{}")

        bus.startWorker("w-country", [HostedStore(CountryStore.self)])
        status = try await client.status(until: "all three workers are live") { $0.liveWorkers == 3 }
        for store in status.stores {
            #expect(store.waitingFor.isEmpty, "\(store.name) still waits for \(store.waitingFor)")
        }

        let result = try await client.dispatch(Action(Flight.countryUpdate, .init(country: "France")))
        #expect(result.succeeded)
        #expect(result.sequence == earlyCity.sequence + 1)
        #expect(result.stores.map(\.name) == ["country", "city", "price"])
        #expect(result.outcomes.map(\.worker) == ["w-country", "w-city", "w-price"])
        let price = try decode(PriceStore.State.self, try await client.state(of: "price"))
        #expect(price == .init(country: "France", city: "Paris", price: Flight.price(country: "France", city: "Paris")))

        await client.close()
        await bus.stop()
    }

    /// The graph is global: a worker whose declarations would close a ring with another worker's is refused, with
    /// the ring in the reason, and leaves no trace on the bus.
    @Test func aCycleAcrossWorkersIsRefused() async throws {
        let bus = try await TestBus()
        let client = try await bus.client()
        bus.startWorker("w1", [HostedStore(KVStore.self, name: "a", dependencies: ["b"])])
        _ = try await client.status(until: "w1 is live") { $0.worker("w1")?.state == .live }

        let (refused, task) = bus.startWorker("w2", [HostedStore(KVStore.self, name: "b", dependencies: ["a"])])
        let error = await #expect(throws: BusError.self) { try await task.value }
        #expect(error?.code == .refused)
        let message = error?.message ?? ""
        #expect(message.contains("a -> b -> a") || message.contains("b -> a -> b"), "\(message)")

        let events = await collect(refused.events)
        let rejection = events.compactMap { event -> (Message.Reject.Code, String)? in
            guard case .rejected(let code, let reason) = event else { return nil }
            return (code, reason)
        }
        #expect(rejection.count == 1)
        #expect(rejection.first?.0 == .cycle)
        #expect(rejection.first?.1.contains("cycle") == true)
        #expect(!events.contains { if case .live = $0 { true } else { false } })

        let status = try await client.status()
        #expect(status.worker("w2") == nil)
        #expect(status.stores.map(\.name) == ["a"])
        #expect(status.store("a")?.waitingFor == ["b"])

        await client.close()
        await bus.stop()
    }

    /// Every replica of a store must declare it the same way.
    @Test func aReplicaWithOtherDependenciesIsRefused() async throws {
        let bus = try await TestBus()
        let client = try await bus.client()
        bus.startWorker("w1", [HostedStore(KVStore.self, name: "kv")])
        _ = try await client.status(until: "w1 is live") { $0.worker("w1")?.state == .live }

        let (refused, task) = bus.startWorker("w2", [HostedStore(KVStore.self, name: "kv", dependencies: ["counter"])])
        let error = await #expect(throws: BusError.self) { try await task.value }
        #expect(error?.code == .refused)
        #expect(error?.message.contains("`kv`") == true, "\(error?.message ?? "")")
        let events = await collect(refused.events)
        #expect(events.contains { if case .rejected(.invalidDeclaration, _) = $0 { true } else { false } }, "\(events)")

        // A replica declared the same way joins.
        bus.startWorker("w3", [HostedStore(KVStore.self, name: "kv")])
        let status = try await client.status(until: "w3 is live") { $0.worker("w3")?.state == .live }
        #expect(status.worker("w2") == nil)
        #expect(status.store("kv")?.replicas.map(\.worker) == ["w1", "w3"])
        #expect(status.store("kv")?.dependsOn == [])

        await client.close()
        await bus.stop()
    }

    /// With a topology pinned, a store that disagrees with it, or is not in it, is refused; one that fits joins.
    /// A pinned name no worker may declare would pin a store that never joins: the file is refused at start.
    @Test func aTopologyWithANameNoWorkerCanDeclareIsRefused() throws {
        let bad = Topology(stores: [Topology.Store(name: "a b")])
        let error = #expect(throws: BusError.self) { try bad.validate(source: "flight.json") }
        #expect(error?.code == .usage && error?.message.contains("flight.json: `a b` is not a store name") == true, "\(String(describing: error))")
        let dependency = Topology(stores: [Topology.Store(name: "city", dependsOn: ["country!"])])
        #expect(throws: BusError.self) { try dependency.validate() }
        try Topology(stores: [Topology.Store(name: "country"), Topology.Store(name: "city", dependsOn: ["country"])]).validate()
    }

    @Test func aTopologyPinsTheGraph() async throws {
        let topology = Topology(stores: [
            .init(name: "country"), .init(name: "city", dependsOn: ["country"]), .init(name: "price", dependsOn: ["city"]),
        ])
        let bus = try await TestBus { $0.topology = topology }
        let client = try await bus.client()

        let (_, conflicting) = bus.startWorker("w-city", [HostedStore(CityStore.self, dependencies: [])])
        let conflict = await #expect(throws: BusError.self) { try await conflicting.value }
        #expect(conflict?.code == .refused)
        #expect(conflict?.message.contains("topology") == true, "\(conflict?.message ?? "")")

        let (stranger, unknown) = bus.startWorker("w-kv", [HostedStore(KVStore.self)])
        let notPinned = await #expect(throws: BusError.self) { try await unknown.value }
        #expect(notPinned?.message.contains("`kv`") == true, "\(notPinned?.message ?? "")")
        let events = await collect(stranger.events)
        #expect(events.contains { if case .rejected(.topologyConflict, _) = $0 { true } else { false } }, "\(events)")

        bus.startWorker("w-country", [HostedStore(CountryStore.self)])
        bus.startWorker("w-city-ok", [HostedStore(CityStore.self)])
        let status = try await client.status(until: "the fitting workers are live") { $0.liveWorkers == 2 }
        #expect(Set(status.workers.map(\.id)) == ["w-country", "w-city-ok"])
        let result = try await client.dispatch(Action(Flight.countryUpdate, .init(country: "Italy")))
        #expect(result.succeeded)
        #expect(result.stores.map(\.name) == ["country", "city"])

        await client.close()
        await bus.stop()
    }

    @Test(arguments: ["", "has space", "slash/id", String(repeating: "w", count: 65)])
    func anInvalidWorkerIDIsRefusedBeforeJoining(id: String) async throws {
        let configuration = WorkerConfiguration(id: id, coordinator: "inproc://nowhere", stores: [HostedStore(CounterStore.self)])
        let invalid = #expect(throws: BusError.self) { try configuration.validate() }
        #expect(invalid?.code == .usage)

        // run() checks the same before it opens a socket: the coordinator never hears of it.
        let bus = try await TestBus()
        let client = try await bus.client()
        let (_, task) = bus.startWorker(id, [HostedStore(CounterStore.self)])
        let error = await #expect(throws: BusError.self) { try await task.value }
        #expect(error?.code == .usage)
        #expect(try await client.status().workers.isEmpty)
        await client.close()
        await bus.stop()
    }

    @Test func aValidConfigurationPassesValidation() throws {
        let configuration = WorkerConfiguration(
            id: "worker-1.eu_west", stores: [HostedStore(CounterStore.self), HostedStore(KVStore.self)])
        try configuration.validate()
        let duplicate = WorkerConfiguration(id: "w", stores: [HostedStore(KVStore.self), HostedStore(CounterStore.self, name: "kv")])
        #expect(throws: BusError.self) { try duplicate.validate() }
    }
}
