import Flux
import Foundation
import FluxBusProtocol
import FluxStores
import Testing

@testable import FluxBus

@Suite("Replicas: every replica applies every action once, in one order", .timeLimit(.minutes(1)))
struct ReplicaTests {
    /// The digest a counter replica reports at a value: FNV-1a 64 of `{"value":N}`.
    static func counterDigest(_ value: Int) -> UInt64 {
        StateDigest.fnv1a64(Array(#"{"value":\#(value)}"#.utf8))
    }

    /// 2,000 `counter.add` from four clients at once, each client with four dispatches outstanding, against three
    /// replicas. Each result must carry three equal digests, and those digests must be the running total at that
    /// sequence: so every replica applied every action exactly once, in sequence order.
    @Test func concurrentClientsAgainstThreeReplicas() async throws {
        let bus = try await TestBus()
        let admin = try await bus.client()
        let replicas = ["r1", "r2", "r3"]
        for id in replicas { bus.startWorker(id, [HostedStore(CounterStore.self)]) }
        try await bus.waitUntilLive(3, client: admin)

        var clients: [BusClient] = []
        for _ in 0..<4 { clients.append(try await bus.client()) }
        let lanesPerClient = 4
        let perLane = 125
        let results = try await withThrowingTaskGroup(of: [(by: Int, result: DispatchResult)].self) { group in
            for (c, client) in clients.enumerated() {
                for lane in 0..<lanesPerClient {
                    group.addTask {
                        var sent: [(by: Int, result: DispatchResult)] = []
                        for i in 0..<perLane {
                            let by = (c * 31 + lane * 7 + i) % 9 + 1
                            sent.append((by, try await client.dispatch(Action(CounterStore.add, .init(by: by)))))
                        }
                        return sent
                    }
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        #expect(results.count == 2_000)

        let ordered = results.sorted { $0.result.sequence < $1.result.sequence }
        #expect(ordered.map(\.result.sequence) == Array(1...2_000), "sequences are unique and gap-free")
        var total = 0
        var mismatches: [UInt64] = []
        for (by, result) in ordered {
            total += by
            let outcomes = result.outcomes
            guard outcomes.count == 3, Set(outcomes.map(\.worker)) == Set(replicas),
                outcomes.allSatisfy({ $0.status == .ok && $0.digest == Self.counterDigest(total) })
            else {
                mismatches.append(result.sequence)
                continue
            }
        }
        #expect(mismatches.isEmpty, "results with a missing, failed or out-of-order replica: \(mismatches.prefix(10))")
        #expect(total == results.map(\.by).reduce(0, +))

        let status = try await admin.status(until: "every replica reports #2000") { status in
            status.store("counter")?.replicas.allSatisfy { $0.lastApplied == 2_000 } == true
        }
        let counter = try #require(status.store("counter"))
        #expect(counter.replicas.map(\.worker).sorted() == replicas)
        #expect(counter.replicas.allSatisfy { $0.digest == Self.counterDigest(total) })
        #expect(counter.divergedAt == 0)
        #expect(status.sequence == 2_000)
        #expect(status.queueLength == 0)
        let state = try await admin.state(of: "counter")
        #expect(text(state) == #"{"value":\#(total)}"#)
        #expect(state.sequence == 2_000)

        for client in clients { await client.close() }
        await admin.close()
        await bus.stop()
    }

    /// A replica that joins after 200 dispatches catches up from the coordinator's history and then answers the next
    /// dispatch with the same digest as the others.
    @Test func aLateReplicaCatchesUpByReplay() async throws {
        let bus = try await TestBus()
        let client = try await bus.client()
        bus.startWorker("r1", [HostedStore(CounterStore.self)])
        bus.startWorker("r2", [HostedStore(CounterStore.self)])
        try await bus.waitUntilLive(2, client: client)
        for i in 1...200 {
            let result = try await client.dispatch(Action(CounterStore.add, .init(by: i)))
            #expect(result.outcomes.count == 2)
        }

        let (late, _) = bus.startWorker("r3", [HostedStore(CounterStore.self)])
        let status = try await client.status(until: "r3 is live") { $0.worker("r3")?.state == .live }
        #expect(status.worker("r3")?.lastApplied == 200)

        let next = try await client.dispatch(Action(CounterStore.add, .init(by: 1)))
        #expect(next.sequence == 201)
        #expect(next.outcomes.map(\.worker).sorted() == ["r1", "r2", "r3"])
        #expect(Set(next.outcomes.map(\.digest)) == [Self.counterDigest(200 * 201 / 2 + 1)])

        // r3 applied the 200 replayed actions and the live one, nothing more; its events say so.
        await client.close()
        await bus.stop()
        let applied = await appliedSequences(late.events, store: "counter", status: .ok)
        #expect(applied == Array(1...201))
    }
}

extension ReplicaTests {
    /// A replica that joins 20,000 actions behind catches up over three FETCH windows of 8,192, each asked for while
    /// the one before it arrives (``CatchUp/fetchAhead()``): it applies every action once, in order, and ends with
    /// the state of the replica that saw them live.
    @Test func aReplicaFarBehindCatchesUpOverSeveralWindows() async throws {
        let bus = try await TestBus()
        let client = try await bus.client()
        bus.startWorker("r1", [HostedStore(CounterStore.self)])
        try await bus.waitUntilLive(1, client: client)
        let add = try BatchAction(Action(CounterStore.add, .init(by: 1)))
        for _ in 0..<5 {
            let result = try await client.dispatchBatch(Array(repeating: add, count: 4_000))
            #expect(result.failures.isEmpty)
        }
        let windows = 20_000 / Int(CatchUp.defaultWindow)
        #expect(windows >= 2, "the log spans more than two windows")

        let (late, _) = bus.startWorker("r3", [HostedStore(CounterStore.self)])
        let status = try await client.status(until: "r3 is live") { $0.worker("r3")?.state == .live }
        #expect(status.worker("r3")?.lastApplied == 20_000)
        let next = try await client.dispatch(Action(CounterStore.add, .init(by: 1)))
        #expect(next.sequence == 20_001)
        #expect(Set(next.outcomes.map(\.digest)) == [Self.counterDigest(20_001)], "both replicas hold the same total")

        await client.close()
        await bus.stop()
        let applied = await appliedSequences(late.events, store: "counter", status: .ok)
        #expect(applied == Array(1...20_001))
    }

    /// A replica that joins while dispatches stream past it must still become live: the coordinator may complete
    /// another dispatch between the joiner's last catch-up step and its READY.
    @Test(arguments: 1...5)
    func aReplicaJoiningUnderLoadBecomesLive(round: Int) async throws {
        let bus = try await TestBus()
        let client = try await bus.client()
        let loader = try await bus.client()
        bus.startWorker("r1", [HostedStore(CounterStore.self)])
        try await bus.waitUntilLive(1, client: client)

        let stop = Mutex(false)
        let load = Task {
            var count = 0
            while !stop.withLock({ $0 }) {
                _ = try await loader.dispatch(Action(CounterStore.add, .init(by: 1)))
                count += 1
            }
            return count
        }
        _ = try await client.status(until: "50 dispatches completed") { $0.sequence >= 50 }
        bus.startWorker("r2", [HostedStore(CounterStore.self)])
        var joined: (any Error)?
        do {
            _ = try await client.status(until: "r2 is live") { $0.worker("r2")?.state == .live }
        } catch {
            joined = error
        }
        stop.withLock { $0 = true }
        let count = try await load.value
        #expect(joined == nil, "\(joined.map(String.init(describing:)) ?? "")")

        if joined == nil {
            let next = try await client.dispatch(Action(CounterStore.add, .init(by: 1)))
            #expect(next.outcomes.map(\.worker).sorted() == ["r1", "r2"])
            #expect(Set(next.outcomes.map(\.digest)) == [Self.counterDigest(count + 1)])
        }
        await loader.close()
        await client.close()
        await bus.stop()
    }
}

import Synchronization
