import Flux
import Foundation
import FluxBus
import FluxBusProtocol
import FluxStores
import Testing

/// A watcher whose store type is not the workers' ends with `diverged` rather than show a state no replica holds.
@Suite("Watching with another store type", .timeLimit(.minutes(1)))
struct WatchDivergenceTests {
    /// `counter` as another version might have it: it refuses to add more than 1 at a time.
    final class StrictCounter: Store {
        static let name = "counter"
        static let handlers = Handlers<StrictCounter>()
            .on(CounterStore.add) { store, action, _ in
                guard action.payload.by <= 1 else { throw ActionError("adds at most 1") }
                store.state.value += action.payload.by
            }
        var state = CounterStore.State()
        init() {}
    }

    /// `counter` with a field the workers' state lacks: its state decodes from theirs, but is not theirs.
    final class AnnotatedCounter: Store {
        struct State: Codable, Sendable {
            var value = 0
            var note = ""
            init() {}
            init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: CodingKeys.self)
                value = try container.decode(Int.self, forKey: .value)
                note = try container.decodeIfPresent(String.self, forKey: .note) ?? ""
            }
        }

        static let name = "counter"
        static let handlers = Handlers<AnnotatedCounter>()
            .on(CounterStore.add) { store, action, _ in store.state.value += action.payload.by }
        var state = State()
        init() {}
    }

    @Test func aHandlerThatEndsOtherwiseThanTheWorkersEndsTheWatch() async throws {
        let cluster = try Cluster()
        try cluster.startCoordinator()
        try cluster.startWorker("w1", stores: ["counter=counter"])
        let client = try await cluster.client()
        try await cluster.waitUntilLive(1, client: client)
        var watch = client.watch(StrictCounter.self).makeAsyncIterator()
        #expect(try await watch.next()?.state.value == 0)
        try await client.dispatch(Action(CounterStore.add, .init(by: 1)))
        try await client.dispatch(Action(CounterStore.add, .init(by: 5)))
        #expect(try await watch.next()?.state.value == 1)
        do {
            let change = try await watch.next()
            Issue.record("a watcher whose handler failed where the workers' succeeded went on: \(String(describing: change))")
        } catch let error as BusError {
            #expect(error.code == .diverged && error.message.contains("#2"), "\(error)")
        }
        #expect(try await watch.next() == nil, "a watch that diverged went on")
        await client.close()
        await cluster.stop()
    }

    @Test func aStateThatIsNotTheWorkersEndsTheWatchAtOnce() async throws {
        let cluster = try Cluster()
        try cluster.startCoordinator()
        try cluster.startWorker("w1", stores: ["counter=counter"])
        let client = try await cluster.client()
        try await cluster.waitUntilLive(1, client: client)
        var watch = client.watch(AnnotatedCounter.self).makeAsyncIterator()
        do {
            let first = try await watch.next()
            Issue.record("a watcher whose state type is not the workers' started: \(String(describing: first))")
        } catch let error as BusError {
            #expect(error.code == .diverged && error.message.contains("not the one the workers run"), "\(error)")
        }
        await client.close()
        await cluster.stop()
    }
}
