import Flux
import Foundation
import FluxBusProtocol
import FluxBusTools
import FluxStores
import Testing

@testable import FluxBus

@Suite("Status and graph: what the coordinator reports", .timeLimit(.minutes(1)))
struct StatusTests {
    /// The graph lists every store with its edges, what it handles and its live replicas, dependencies first
    /// (docs/PROTOCOL.md, GRAPH), whatever order the workers joined in.
    @Test func theGraphListsStoresDependenciesFirstWithLiveReplicas() async throws {
        let bus = try await TestBus()
        let client = try await bus.client()
        bus.startWorker("w-price", [HostedStore(PriceStore.self), HostedStore(CounterStore.self)])
        _ = try await client.status(until: "w-price is live") { $0.worker("w-price")?.state == .live }
        bus.startWorker("w-city", [HostedStore(CityStore.self), HostedStore(CounterStore.self)])
        _ = try await client.status(until: "w-city is live") { $0.worker("w-city")?.state == .live }
        bus.startWorker("w-country", [HostedStore(CountryStore.self)])
        try await bus.waitUntilLive(3, client: client)

        let graph = try await client.graph()
        #expect(Set(graph.stores.map(\.name)) == ["country", "city", "price", "counter"])
        let names = graph.stores.map(\.name)
        for node in graph.stores {
            for dependency in node.dependsOn {
                let (at, dependencyAt) = (names.firstIndex(of: node.name), names.firstIndex(of: dependency))
                #expect(dependencyAt != nil && dependencyAt! < at!, "\(dependency) is listed after \(node.name): \(names)")
            }
        }
        #expect(graph.node("country")?.dependsOn == [])
        #expect(graph.node("city")?.dependsOn == ["country"])
        #expect(graph.node("price")?.dependsOn == ["city"])
        #expect(graph.node("city")?.handles == ["city-update", "country-update"])
        #expect(graph.node("counter")?.handles == ["counter.add"])
        #expect(graph.stores.allSatisfy { !$0.handlesAll })
        #expect(graph.node("counter")?.replicas == 2)
        #expect(graph.node("price")?.replicas == 1)

        // The views built on it agree.
        let text = GraphView.text(graph)
        #expect(text.contains("city waits for country"))
        #expect(text.contains("counter  [2 live replicas; handles counter.add]"))

        await client.close()
        await bus.stop()
    }

    /// Epoch, sequence, queue and per-worker and per-replica progress, after a few dispatches.
    @Test func theStatusTracksSequencesAndReplicas() async throws {
        let bus = try await TestBus()
        let client = try await bus.client()
        let empty = try await client.status()
        #expect(empty.sequence == 0)
        #expect(empty.queueLength == 0)
        #expect(empty.workers.isEmpty)
        #expect(empty.stores.isEmpty)
        #expect(empty.epoch != 0)
        #expect(empty.publishEndpoint.hasPrefix("inproc://publish-"))

        bus.startWorker("w1", [HostedStore(CountryStore.self), HostedStore(CounterStore.self)])
        bus.startWorker("w2", [HostedStore(CounterStore.self)])
        try await bus.waitUntilLive(2, client: client)

        var last: DispatchResult?
        for by in 1...4 { last = try await client.dispatch(Action(CounterStore.add, .init(by: by))) }
        let counted = try #require(last)
        let country = try await client.dispatch(Action(Flight.countryUpdate, .init(country: "Spain")))
        #expect(country.sequence == counted.sequence + 1)
        #expect(country.epoch == empty.epoch)

        // w2 takes no part in #5; it reports having applied it with its next heartbeat.
        let status = try await client.status(until: "both workers report #5") { status in
            status.workers.allSatisfy { $0.lastApplied == country.sequence }
        }
        #expect(status.epoch == empty.epoch)
        #expect(status.sequence == country.sequence)
        #expect(status.queueLength == 0)
        #expect(status.workers.map(\.id).sorted() == ["w1", "w2"])
        #expect(status.workers.allSatisfy { $0.state == .live })
        #expect(status.worker("w1")?.stores == ["country", "counter"])
        #expect(status.worker("w2")?.stores == ["counter"])
        #expect(status.workers.allSatisfy { $0.heartbeatAgeMillis < 2_000 })

        let counter = try #require(status.store("counter"))
        #expect(counter.replicas.map(\.worker).sorted() == ["w1", "w2"])
        // A replica's progress is the last dispatch it took part in, with the digest it reported then.
        #expect(counter.replicas.allSatisfy { $0.lastApplied == counted.sequence })
        #expect(counter.replicas.allSatisfy { $0.digest == StateDigest.fnv1a64(Array(#"{"value":10}"#.utf8)) })
        #expect(counter.divergedAt == 0)
        #expect(counter.waitingFor.isEmpty)
        #expect(status.store("country")?.replicas.map(\.lastApplied) == [country.sequence])

        await client.close()
        await bus.stop()
    }
}
