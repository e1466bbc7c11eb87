import Flux
import Foundation
import FluxBusProtocol
import FluxStores
import Testing

@testable import FluxBus

@Suite("Dispatching: one store type in process and on workers, local waits, request ids", .timeLimit(.minutes(1)))
struct DispatchTests {
    /// The flight example and a counter, mixed, with one action that fails in `city`.
    static let script: [AnyAction] = [
        AnyAction(Action(Flight.countryUpdate, .init(country: "Japan"))),
        AnyAction(Action(Flight.cityUpdate, .init(city: "Osaka"))),
        AnyAction(Action(CounterStore.add, .init(by: 5))),
        AnyAction(Action(Flight.countryUpdate, .init(country: "Atlantis"))),
        AnyAction(Action(Flight.cityUpdate, .init(city: "Nice"))),
        AnyAction(Action(Flight.countryUpdate, .init(country: "France"))),
        AnyAction(Action(CounterStore.add, .init(by: -2))),
        AnyAction(Action(JournalStore.note, .init(text: "booked"))),
        AnyAction(Action(JournalStore.note, .init(text: "refund"), error: ActionError("card declined"))),
    ]

    /// The same store types, unchanged, under a `Hub` and on three workers: every dispatch has the same outcomes,
    /// and every store ends in the same state, byte for byte.
    @Test func oneStoreTypeRunsInProcessAndOnWorkersAlike() async throws {
        let hub = Hub()
        try hub.register([CountryStore.self, CityStore.self, PriceStore.self, CounterStore.self, JournalStore.self])

        let bus = try await TestBus()
        let client = try await bus.client()
        bus.startWorker("w1", [HostedStore(CountryStore.self), HostedStore(CounterStore.self)])
        bus.startWorker("w2", [HostedStore(CityStore.self)])
        bus.startWorker("w3", [HostedStore(PriceStore.self), HostedStore(JournalStore.self)])
        try await bus.waitUntilLive(3, client: client)

        for action in Self.script {
            let report = try hub.dispatch(action)
            let result = try await client.dispatch(action.name, payload: try action.encodedPayload(), error: action.error?.message)
            let inProcess = report.outcomes.map { outcome -> [String] in
                switch outcome.status {
                case .ok: [outcome.store, "ok", ""]
                case .failed(let message): [outcome.store, "failed", message]
                case .skipped(let reason): [outcome.store, "skipped", reason]
                }
            }
            let onTheBus = result.stores.map { [$0.name, $0.status.description, $0.error ?? ""] }
            #expect(onTheBus == inProcess, "\(action.name)")
            #expect(result.stores.allSatisfy { $0.replicas == 1 && $0.applied == ($0.status == .ok ? 1 : 0) && $0.unknown == 0 })
        }

        let expected: [String: String] = [
            "country": try canonicalJSON(try #require(hub.store(of: CountryStore.self)).state),
            "city": try canonicalJSON(try #require(hub.store(of: CityStore.self)).state),
            "price": try canonicalJSON(try #require(hub.store(of: PriceStore.self)).state),
            "counter": try canonicalJSON(try #require(hub.store(of: CounterStore.self)).state),
            "journal": try canonicalJSON(try #require(hub.store(of: JournalStore.self)).state),
        ]
        #expect(expected["counter"] == #"{"value":3}"#)
        #expect(expected["city"] == #"{"city":"Paris","country":"France"}"#)
        #expect(expected["journal"] == #"["booked","refund (error: card declined)"]"#)
        for (name, json) in expected {
            let replica = try await client.state(of: name)
            #expect(text(replica) == json, "\(name)")
            #expect(replica.digest == StateDigest.fnv1a64(Array(json.utf8)), "\(name)")
            #expect(replica.sequence == UInt64(Self.script.count), "\(name)")
        }
        await client.close()
        await bus.stop()
    }

    /// `city` and `price` share a worker, `country` is elsewhere: `price` reads `city`'s outcome and output as the
    /// coordinator releases them, even on the same worker (docs/ARCHITECTURE.md, "One outcome per dependency"). A
    /// `city-update` involves only that worker, so it completes only if the coordinator releases `city` to it.
    @Test func aDependencyOnTheSameWorkerIsReleasedToIt() async throws {
        let bus = try await TestBus()
        let client = try await bus.client()
        bus.startWorker("w-destination", [HostedStore(PriceStore.self), HostedStore(CityStore.self)])
        bus.startWorker("w-country", [HostedStore(CountryStore.self)])
        try await bus.waitUntilLive(2, client: client)

        let japan = try await client.dispatch(Action(Flight.countryUpdate, .init(country: "Japan")))
        #expect(japan.succeeded)
        #expect(japan.stores.map(\.name) == ["country", "city", "price"])
        #expect(japan.outcomes.map(\.worker) == ["w-country", "w-destination", "w-destination"])

        let osaka = try await client.dispatch(Action(Flight.cityUpdate, .init(city: "Osaka")))
        #expect(osaka.succeeded)
        #expect(osaka.stores.map(\.name) == ["city", "price"])
        let price = try decode(PriceStore.State.self, try await client.state(of: "price"))
        #expect(price == .init(country: "Japan", city: "Osaka", price: Flight.price(country: "Japan", city: "Osaka")))

        // A failure travels the same way: `price` is skipped on the worker where `city` failed.
        let atlantis = try await client.dispatch(Action(Flight.countryUpdate, .init(country: "Atlantis")))
        #expect(atlantis.stores.map(\.status) == [.ok, .failed, .skipped])
        #expect(atlantis.store("price")?.error == "waits for `city`, which failed")
        let unchanged = try decode(PriceStore.State.self, try await client.state(of: "price"))
        #expect(unchanged == price)

        await client.close()
        await bus.stop()
    }

    /// A retry with the same request id gets the first result and applies nothing again, whether it comes after the
    /// first completed or while it is still queued.
    @Test func aRequestIDIsDispatchedOnce() async throws {
        let bus = try await TestBus()
        let client = try await bus.client()
        let other = try await bus.client()
        bus.startWorker("w1", [HostedStore(CounterStore.self)])
        try await bus.waitUntilLive(1, client: client)

        let first = try await client.dispatch(Action(CounterStore.add, .init(by: 5)), requestID: "add-five")
        let retry = try await client.dispatch(Action(CounterStore.add, .init(by: 5)), requestID: "add-five")
        let fromElsewhere = try await other.dispatch(Action(CounterStore.add, .init(by: 5)), requestID: "add-five")
        #expect(first.succeeded)
        #expect(retry.sequence == first.sequence)
        #expect(fromElsewhere.sequence == first.sequence)
        #expect(retry.outcomes == first.outcomes)
        #expect(try decode(CounterStore.State.self, try await client.state(of: "counter")).value == 5)

        // The same id sent twice at once, from two clients: one dispatch, both answered.
        async let a = client.dispatch(Action(CounterStore.add, .init(by: 10)), requestID: "add-ten")
        async let b = other.dispatch(Action(CounterStore.add, .init(by: 10)), requestID: "add-ten")
        let (resultA, resultB) = try await (a, b)
        #expect(resultA.sequence == resultB.sequence)
        #expect(resultA.sequence == first.sequence + 1)

        let fresh = try await client.dispatch(Action(CounterStore.add, .init(by: 1)))
        #expect(fresh.sequence == first.sequence + 2)
        let counter = try await client.state(of: "counter")
        #expect(try decode(CounterStore.State.self, counter).value == 16)
        #expect(counter.sequence == fresh.sequence)

        await other.close()
        await client.close()
        await bus.stop()
    }

    /// An action type no store handles still gets a sequence, and completes at once with no outcomes: unhandled, not
    /// a success.
    @Test func anActionNobodyHandlesCompletesWithNoOutcomes() async throws {
        let bus = try await TestBus()
        let client = try await bus.client()
        bus.startWorker("w1", [HostedStore(CounterStore.self)])
        try await bus.waitUntilLive(1, client: client)

        let before = try await client.dispatch(Action(CounterStore.add, .init(by: 1)))
        let nobody = try await client.dispatch("nobody.handles", json: #"{"x":1}"#)
        #expect(nobody.outcomes.isEmpty)
        #expect(!nobody.succeeded && nobody.isUnhandled && nobody.verdict == "unhandled")
        #expect(nobody.sequence == before.sequence + 1)
        let after = try await client.dispatch(Action(CounterStore.add, .init(by: 1)))
        #expect(after.sequence == nobody.sequence + 1)
        #expect(try decode(CounterStore.State.self, try await client.state(of: "counter")).value == 2)

        await client.close()
        await bus.stop()
    }

    /// Requests the coordinator cannot take are refused with a code, not dropped.
    @Test func malformedRequestsAreRefused() async throws {
        let bus = try await TestBus()
        let client = try await bus.client()
        bus.startWorker("w1", [HostedStore(CounterStore.self)])
        try await bus.waitUntilLive(1, client: client)

        let empty = await #expect(throws: BusError.self) { try await client.dispatch("", json: "{}") }
        #expect(empty?.code == .refused)
        #expect(empty?.remoteCode == .invalidRequest)
        let unknown = await #expect(throws: BusError.self) { try await client.state(of: "no-such-store") }
        #expect(unknown?.remoteCode == .unknownStore)

        // A payload that does not fit the handler's type fails in the store, and says why.
        let wrong = try await client.dispatch("counter.add", json: #"{"by":"many"}"#)
        #expect(wrong.store("counter")?.status == .failed)
        #expect(wrong.store("counter")?.error?.contains("counter.add") == true, "\(wrong.store("counter")?.error ?? "")")
        #expect(try decode(CounterStore.State.self, try await client.state(of: "counter")).value == 0)

        await client.close()
        await bus.stop()
    }
}
