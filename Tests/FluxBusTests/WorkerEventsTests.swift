import Flux
import Foundation
import FluxBusProtocol
import FluxStores
import Testing

@testable import FluxBus

/// `reportsEvents` off (as `fluxbus worker` runs) leaves the events stream empty, and `reportsAppliedEvents` off (as
/// `fluxbus bench catch-up` runs its replica) leaves only the milestones in it; neither changes anything else the
/// worker does: it applies and acknowledges as before, and its journal still has every applied action.
@Suite(.timeLimit(.minutes(1)))
struct WorkerEventsTests {
    @Test func aWorkerThatReportsNoEventsStillAppliesAndJournals() async throws {
        let journal = FileManager.default.temporaryDirectory.appendingPathComponent("events-\(UUID().uuidString).journal").path
        defer { try? FileManager.default.removeItem(atPath: journal) }
        let bus = try await TestBus()
        let client = try await bus.client()
        let reporting = bus.startWorker("w1", [HostedStore(CounterStore.self)])
        let silent = bus.startWorker("w2", [HostedStore(CounterStore.self)]) {
            $0.reportsEvents = false
            $0.journalPath = journal
        }
        let milestones = bus.startWorker("w3", [HostedStore(CounterStore.self)]) { $0.reportsAppliedEvents = false }
        try await bus.waitUntilLive(3, client: client)
        var sequences: [UInt64] = []
        for by in 1...3 {
            let result = try await client.dispatch(Action(CounterStore.add, .init(by: by)))
            #expect(result.succeeded && result.stores.map(\.name) == ["counter"])  // after both replicas acknowledged
            sequences.append(result.sequence)
        }
        #expect(String(decoding: try await client.state(of: "counter").state, as: UTF8.self) == #"{"value":6}"#)
        await client.close()
        await bus.stop()

        let applied = await appliedSequences(reporting.worker.events, store: "counter")
        #expect(applied == sequences)
        #expect(await collect(silent.worker.events).isEmpty)
        let onlyMilestones = await collect(milestones.worker.events)
        #expect(onlyMilestones.contains { if case .welcomed = $0 { true } else { false } })
        #expect(onlyMilestones.contains { if case .live = $0 { true } else { false } })
        #expect(!onlyMilestones.contains { if case .applied = $0 { true } else { false } })
        let lines = try String(contentsOfFile: journal, encoding: .utf8).split(separator: "\n")
        #expect(lines.compactMap { UInt64($0.split(separator: "\t").first ?? "") } == sequences)
    }
}
