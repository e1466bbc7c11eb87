import FluxBusProtocol
import FluxStores
import Synchronization
import Testing
import ZeroMQ

@testable import FluxBus

/// A COMPLETED waits for the next publication (`CoordinatorConfiguration.completedWindow`): what a subscriber of the
/// real PUB socket receives from two lock-step dispatches on a bus with one worker.
@Suite("The coordinator's COMPLETEDs and the next ACTION", .timeLimit(.minutes(1)))
struct HeldCompletionsTests {
    /// One publication as a subscriber receives it: the commands of its messages, each with its sequence.
    struct Publication: Equatable, CustomStringConvertible {
        var items: [String]
        var description: String { items.joined(separator: "+") }
    }

    /// Publications, heartbeats left out, from two lock-step dispatches, until `count` of them have arrived.
    static func publications(window: Duration, count: Int) async throws -> [Publication] {
        let bus = try await TestBus { $0.completedWindow = window }
        let client = try await bus.client()
        bus.startWorker("w1", [HostedStore(CounterStore.self)])
        try await bus.waitUntilLive(1, client: client)
        let (context, endpoint) = (bus.context, try await bus.coordinator.endpoints.publish)
        let subscribed = Atomic(false)
        // The socket lives on one thread of its own, from its first use to its close.
        let reading = Task {
            try await onDedicatedThread { () throws -> [Publication] in
                let subscriber = try ZMQSocket(.sub, context: context)
                defer { subscriber.close() }
                try subscriber.subscribe(Codec.signature)
                try subscriber.connect(endpoint)
                // The subscription holds once a HEARTBEAT arrives (the idle coordinator beats every 250 ms).
                guard try subscriber.receive(timeout: .seconds(5)) != nil else { return [] }
                subscribed.store(true, ordering: .releasing)
                var found: [Publication] = []
                while found.count < count, let frames = try subscriber.receive(timeout: .seconds(5)) {
                    let items = try Codec().decodeAll(frames).compactMap { message -> String? in
                        switch message {
                        case .action(let action): "ACTION \(action.sequence)"
                        case .completed(let completed): "COMPLETED \(completed.sequence)"
                        default: nil
                        }
                    }
                    if !items.isEmpty { found.append(Publication(items: items)) }
                }
                return found
            }
        }
        for _ in 0..<500 where !subscribed.load(ordering: .acquiring) { try await Task.sleep(for: .milliseconds(10)) }
        for _ in 1...2 { try await client.dispatch("counter.add", json: #"{"by":1}"#) }
        let received = try await reading.value
        await client.close()
        await bus.stop()
        return received
    }

    /// The first dispatch's COMPLETED goes out with the second's ACTION, ahead of it, in one BUNDLE: the worker wakes
    /// once per dispatch. The second's COMPLETED, which nothing follows, goes out alone when the window ends.
    @Test func aCompletedTravelsWithTheNextActionAndTheLastOneAlone() async throws {
        let received = try await Self.publications(window: .milliseconds(500), count: 3)
        #expect(received.map(\.description) == ["ACTION 1", "COMPLETED 1+ACTION 2", "COMPLETED 2"])
    }

    /// Held COMPLETEDs come out joined into runs as the outbox would join them, in order, and take them apart into
    /// the same COMPLETEDs; taking them ends the window.
    @Test func heldCompletedsComeOutAsRunsOfTheSameMessages() throws {
        let outcome = Outcome(store: "counter", worker: "w1", status: .ok, digest: 0)
        let held: [Message] = (1...5 as ClosedRange<UInt64>).map { sequence in
            var mine = outcome
            mine.digest = sequence * 7
            return .completed(.init(epoch: 3, sequence: sequence, actionType: "counter.add", elapsedMicros: sequence, outcomes: [mine]))
        } + [.completed(.init(epoch: 3, sequence: 6, actionType: "kv.set", elapsedMicros: 1, outcomes: [outcome]))]
        var completions = HeldCompletions()
        #expect(completions.isEmpty && completions.until == nil)
        for message in held { completions.hold(message, at: MonotonicTime(nanoseconds: 10), window: .milliseconds(1)) }
        #expect(!completions.isEmpty && completions.until == MonotonicTime(nanoseconds: 1_000_010))
        let taken = completions.take()
        #expect(taken.map(\.command) == [.completions, .completed])
        #expect(try taken.flatMap { try Codec().decodeAll(Codec().encode($0)) } == held)
        #expect(completions.isEmpty && completions.until == nil && completions.take().isEmpty)
    }

    /// With no window, each COMPLETED is published at once, alone.
    @Test func aZeroWindowPublishesEachCompletedAtOnce() async throws {
        let received = try await Self.publications(window: .zero, count: 4)
        #expect(received.map(\.description) == ["ACTION 1", "COMPLETED 1", "ACTION 2", "COMPLETED 2"])
    }
}
