import Flux
import Foundation
import FluxBus
import FluxBusProtocol
import FluxStores
import Testing

/// The bus under real faults: SIGKILL, SIGSTOP, messages lost on the way to a subscriber, and a failing handler.
/// Three `counter` replicas make loss or double application visible: each must end at exactly the total, which its
/// digest proves without asking it.
@Suite("Faults injected for real", .timeLimit(.minutes(1)))
struct FaultTests {
    static let fastCoordinator = ["--ack-timeout", "1", "--resend-ms", "20"]

    static func digest(ofValue value: Int) -> UInt64 { StateDigest.fnv1a64(Array(#"{"value":\#(value)}"#.utf8)) }

    /// Waits until every replica of `counter` is live and has reported the digest of `value`. A replica that caught
    /// up by replay reports its digest with its next acknowledgement, so a no-op add is dispatched to refresh them.
    static func expectReplicasHold(_ value: Int, _ replicas: Int, client: BusClient, cluster: Cluster) async throws {
        try await cluster.waitUntilLive(replicas, client: client)
        let expected = digest(ofValue: value)
        let deadline = ContinuousClock.now.advanced(by: .seconds(20))
        while ContinuousClock.now < deadline {
            let result = try await client.dispatch("counter.add", json: #"{"by":0}"#)
            if result.outcomes.count == replicas, result.outcomes.allSatisfy({ $0.status == .ok && $0.digest == expected }) {
                return
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        let status = try await client.status()
        Issue.record("replicas did not all reach {\"value\":\(value)}: \(status.stores.first { $0.name == "counter" }?.replicas ?? [])\n\(cluster.allLogs())")
    }

    @Test func aKilledReplicaRestartedWithTheSameIDEndsWithEveryAction() async throws {
        let cluster = try Cluster()
        try cluster.startCoordinator(Self.fastCoordinator)
        for id in ["r1", "r2", "r3"] { try cluster.startWorker(id, stores: ["counter=counter"]) }
        let client = try await cluster.client()
        try await cluster.waitUntilLive(3, client: client)

        var lostSeen = false
        for index in 1...5_000 {
            if index == 1_500 { kill(try #require(cluster.pid("r2")), SIGKILL) }
            if index == 3_000 { try cluster.startWorker("r2", stores: ["counter=counter"]) }
            let result = try await client.dispatch("counter.add", json: #"{"by":1}"#)
            #expect(result.succeeded, "#\(result.sequence): \(result.outcomes)")
            lostSeen = lostSeen || result.outcomes.contains { $0.status == .lost && $0.worker == "r2" }
        }
        #expect(lostSeen, "no result named the killed replica as lost")
        try await Self.expectReplicasHold(5_000, 3, client: client, cluster: cluster)
        await client.close()
        await cluster.stop()
    }

    @Test func aStoppedWorkerIsMarkedLostThenCatchesUpAndTurnsLive() async throws {
        let cluster = try Cluster()
        try cluster.startCoordinator(Self.fastCoordinator)
        for id in ["r1", "r2", "r3"] { try cluster.startWorker(id, stores: ["counter=counter"]) }
        let client = try await cluster.client()
        try await cluster.waitUntilLive(3, client: client)
        for _ in 0..<100 { _ = try await client.dispatch("counter.add", json: #"{"by":1}"#) }

        let stopped = try #require(cluster.pid("r3"))
        kill(stopped, SIGSTOP)
        // The bus keeps dispatching while r3 is stopped, well past its deadline (4 heartbeats of 100 ms).
        let pausedUntil = ContinuousClock.now.advanced(by: .milliseconds(1_500))
        var duringStop = 0
        while ContinuousClock.now < pausedUntil {
            let result = try await client.dispatch("counter.add", json: #"{"by":1}"#)
            #expect(result.succeeded)
            duringStop += 1
        }
        let whileStopped = try await client.status()
        #expect(whileStopped.workers.first { $0.id == "r3" }?.state == .lost)
        kill(stopped, SIGCONT)

        try await Self.expectReplicasHold(100 + duringStop, 3, client: client, cluster: cluster)
        #expect(try await client.status().workers.allSatisfy { $0.state == .live })
        await client.close()
        let statuses = await cluster.stop()
        #expect(statuses["r3"] == 0, "r3 exited \(statuses["r3"].map(String.init) ?? "?")")
    }

    @Test func aReplicaLosingMessagesOnItsSubscriptionStillAppliesEveryActionInOrder() async throws {
        let cluster = try Cluster()
        try cluster.startCoordinator(Self.fastCoordinator)
        try cluster.startWorker("r1", stores: ["counter=counter"])
        try cluster.startWorker("r2", stores: ["counter=counter"])
        let journal = cluster.directory.appendingPathComponent("lossy.journal")
        try cluster.startWorker("lossy", stores: ["counter=counter"], extra: ["--drop-published", "0.1", "--journal", journal.path])
        let client = try await cluster.client()
        try await cluster.waitUntilLive(3, client: client)

        var sequences: [UInt64] = []
        for _ in 0..<1_000 {
            let result = try await client.dispatch("counter.add", json: #"{"by":1}"#)
            #expect(result.succeeded)
            sequences.append(result.sequence)
        }
        try await Self.expectReplicasHold(1_000, 3, client: client, cluster: cluster)
        await client.close()
        await cluster.stop()
        // The lossy replica applied every dispatch of the run once, in order, with no hole.
        let applied = try JournalEntry.read(journal).map(\.sequence)
        let run = Set(sequences)
        #expect(applied.filter(run.contains) == sequences)
        #expect(applied == applied.sorted() && Set(applied).count == applied.count)
    }

    @Test func aFailingHandlerSkipsItsDependentsAndTheNextActionIsClean() async throws {
        let cluster = try Cluster()
        try cluster.startCoordinator(Self.fastCoordinator)
        try cluster.startWorker("w1", stores: ["country=country"])
        try cluster.startWorker("w2", stores: ["city=city"])
        try cluster.startWorker("w3", stores: ["price=price"])
        let client = try await cluster.client()
        try await cluster.waitUntilLive(3, client: client)

        let failing = try await client.dispatch(Action(Flight.countryUpdate, .init(country: "Atlantis")))
        #expect(failing.stores.map(\.status) == [.ok, .failed, .skipped])
        #expect(failing.stores[1].error == "no default city for country `Atlantis`")
        #expect(failing.stores[2].error == "waits for `city`, which failed")
        let next = try await client.dispatch(Action(Flight.countryUpdate, .init(country: "Spain")))
        #expect(next.succeeded)
        #expect(next.sequence == failing.sequence + 1)
        let price = try await client.state(of: "price")
        #expect(String(decoding: price.state, as: UTF8.self).contains(#""city":"Madrid""#))
        await client.close()
        await cluster.stop()
    }
}
