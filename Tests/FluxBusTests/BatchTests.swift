import Flux
import Foundation
import FluxBusProtocol
import FluxStores
import Testing

@testable import FluxBus

@Suite("Batches: the same outcomes as one by one, for less", .timeLimit(.minutes(1)))
struct BatchTests {
    /// A mix of action types with different plans, failures that skip dependents, and dependencies across workers.
    static let actions: [BatchAction] = (0..<60).map { index in
        switch index % 4 {
        case 0: action(Flight.countryUpdate, .init(country: ["Japan", "France", "Atlantis", "Peru"][index / 4 % 4]))
        case 1: action(Flight.cityUpdate, .init(city: ["Osaka", "Lyon", "Cusco"][index % 3]))
        case 2: action(CounterStore.add, .init(by: index))
        default: action(Flight.countryUpdate, .init(country: "Chile"))
        }
    }

    static func action<Payload>(_ type: ActionType<Payload>, _ payload: Payload) -> BatchAction {
        try! BatchAction(Action(type, payload))
    }

    /// The flight chain on three workers, with a counter beside the country store.
    static func flightBus() async throws -> (TestBus, BusClient) {
        let bus = try await TestBus()
        let client = try await bus.client()
        bus.startWorker("w-price", [HostedStore(PriceStore.self)])
        bus.startWorker("w-city", [HostedStore(CityStore.self)])
        bus.startWorker("w-country", [HostedStore(CountryStore.self), HostedStore(CounterStore.self)])
        try await bus.waitUntilLive(3, client: client)
        return (bus, client)
    }

    @Test func aBatchRecordsTheSameOutputsAndDigestsAsDispatchingOneByOne() async throws {
        let (single, singleClient) = try await Self.flightBus()
        var singleFailures: [BatchFailure] = []
        var lastOutcomes: [Outcome] = []
        for action in Self.actions {
            let result = try await singleClient.dispatch(action.actionType, payload: action.payload)
            singleFailures += result.outcomes.filter { $0.status != .ok }.map { BatchFailure(sequence: result.sequence, outcome: $0) }
            lastOutcomes = result.outcomes
        }

        let (batched, batchedClient) = try await Self.flightBus()
        let result = try await batchedClient.dispatchBatch(Array(Self.actions[..<25]))
        let rest = try await batchedClient.dispatchBatch(Array(Self.actions[25...]))
        #expect(result.firstSequence == 1 && result.count == 25 && rest.firstSequence == 26 && rest.lastSequence == 60)
        #expect(!singleFailures.isEmpty, "the workload must include failures and skips")
        #expect(result.failures + rest.failures == singleFailures)

        // What every store recorded for every action, outputs included, is the same.
        let singleHistory = try await singleClient.history(from: 1)
        let batchedHistory = try await batchedClient.history(from: 1)
        #expect(singleHistory.count == 60)
        #expect(singleHistory.map(\.plan) == batchedHistory.map(\.plan))
        #expect(singleHistory.map(\.outputs) == batchedHistory.map(\.outputs))
        #expect(singleHistory.map(\.payload) == batchedHistory.map(\.payload))

        // And so is every replica's final state.
        for store in ["country", "city", "price", "counter"] {
            let one = try await singleClient.state(of: store)
            let other = try await batchedClient.state(of: store)
            #expect(one.state == other.state, "\(store)")
            #expect(one.digest == other.digest && one.sequence == 60 && other.sequence == 60, "\(store)")
        }
        // The batch's answer ends with the last action's outcomes, digests included.
        #expect(rest.outcomes == lastOutcomes)
        for client in [singleClient, batchedClient] { await client.close() }
        await single.stop()
        await batched.stop()
    }

    @Test func aRetriedBatchGetsItsAnswerAgainAndRunsOnce() async throws {
        let bus = try await TestBus()
        let client = try await bus.client()
        bus.startWorker("w1", [HostedStore(CounterStore.self)])
        try await bus.waitUntilLive(1, client: client)
        let adds = (1...100).map { Self.action(CounterStore.add, .init(by: $0)) }

        let first = try await client.dispatchBatch(adds, requestID: "batch-1")
        let again = try await client.dispatchBatch(adds, requestID: "batch-1")
        #expect(first == again)
        #expect(first.firstSequence == 1 && first.count == 100 && first.failures.isEmpty)
        #expect(try await client.state(of: CounterStore.self) == .init(value: 5050))
        #expect(try await client.status().sequence == 100)
        await client.close()
        await bus.stop()
    }

    @Test func anEmptyOrOversizedBatchIsRefusedWithTheLimitNamed() async throws {
        let bus = try await TestBus { $0.maxBatch = 10 }
        let client = try await bus.client()
        for actions in [[], Array(repeating: Self.action(CounterStore.add, .init(by: 1)), count: 11)] {
            let error = await #expect(throws: BusError.self) { try await client.dispatchBatch(actions) }
            #expect(error?.remoteCode == .invalidRequest)
            #expect(error?.message.contains("1 to 10 actions") == true, "\(String(describing: error))")
        }
        #expect(try await client.status().sequence == 0)
        await client.close()
        await bus.stop()
    }
}
