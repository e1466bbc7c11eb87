import Flux
import Foundation
import FluxBus
import FluxBusProtocol
import FluxBusTools
import FluxStores
import Testing

/// The bus under real faults: SIGKILL, SIGSTOP, messages lost on the way to a subscriber, and a failing handler.
/// Three `kv` replicas, each with a journal, make loss, double application and disorder visible: every replica must
/// end with exactly the expected map, and its journal must list every sequence once, in order (``KVHistory`` says
/// why a counter cannot show either).
@Suite("Faults injected for real", .timeLimit(.minutes(1)))
struct FaultTests {
    static let ackTimeoutSeconds = 1
    static let fastCoordinator = ["--ack-timeout", "\(ackTimeoutSeconds)", "--resend-ms", "20"]
    /// How long one dispatch may take while a replica is dead or stopped: the ack timeout, after which the
    /// coordinator stops waiting for it, and a margin for a loaded machine. Past it the client gives up (`unreachable`)
    /// and the test fails: the bound on "no stall".
    static let stallBound: Duration = .seconds(ackTimeoutSeconds + 4)

    static func journal(_ cluster: Cluster, _ name: String) -> URL {
        cluster.directory.appendingPathComponent("\(name).journal")
    }

    @Test func aKilledReplicaRestartedWithTheSameIDEndsWithEveryAction() async throws {
        let cluster = try Cluster()
        try cluster.startCoordinator(Self.fastCoordinator)
        // r2's two processes keep separate journals: the second starts empty and replays the whole history.
        for id in ["r1", "r2", "r3"] {
            try cluster.startWorker(id, stores: ["kv=kv"], extra: ["--journal", Self.journal(cluster, id).path])
        }
        let client = try await cluster.client()
        try await cluster.waitUntilLive(3, client: client)

        var history = KVHistory()
        var lostSeen = false
        for index in 1...3_000 {
            if index == 1_000 { kill(try #require(cluster.pid("r2")), SIGKILL) }
            if index == 2_000 {
                try cluster.startWorker("r2", stores: ["kv=kv"], extra: ["--journal", Self.journal(cluster, "r2-again").path])
            }
            // While r2 is dead, no dispatch waits on it past the ack timeout.
            let result = try await history.dispatch(index, client: client, timeout: Self.stallBound)
            lostSeen = lostSeen || result.outcomes.contains { $0.status == .unknown && $0.worker == "r2" }
        }
        #expect(lostSeen, "no result named the killed replica as lost")
        try await history.expectReplicasHold(3, client: client, cluster: cluster)
        await client.close()
        let statuses = await cluster.stop()
        #expect(statuses["r2"] == 0 && statuses["r1"] == 0 && statuses["r3"] == 0, "\(statuses)")

        try history.expectJournal(Self.journal(cluster, "r1"), of: "r1")
        try history.expectJournal(Self.journal(cluster, "r3"), of: "r3")
        try history.expectJournal(Self.journal(cluster, "r2-again"), of: "r2 restarted")
        let beforeKill = try history.expectJournalPrefix(Self.journal(cluster, "r2"), of: "r2 before SIGKILL")
        #expect(beforeKill >= 999, "r2 applied only \(beforeKill) dispatches before it was killed at the 1000th")
    }

    @Test func aStoppedWorkerIsMarkedLostThenCatchesUpAndTurnsLive() async throws {
        let cluster = try Cluster()
        try cluster.startCoordinator(Self.fastCoordinator)
        for id in ["r1", "r2", "r3"] {
            try cluster.startWorker(id, stores: ["kv=kv"], extra: ["--journal", Self.journal(cluster, id).path])
        }
        let client = try await cluster.client()
        try await cluster.waitUntilLive(3, client: client)
        var history = KVHistory()
        for index in 1...100 { try await history.dispatch(index, client: client) }

        let stopped = try #require(cluster.pid("r3"))
        kill(stopped, SIGSTOP)
        // The first dispatch after the stop waits for r3 until the ack timeout at most; the CLI's --timeout bounds it
        // end to end (exit 3 if no answer comes), and its JSON names r3 lost.
        let first = try await cluster.run(
            "dispatch-while-stopped",
            ["dispatch", "kv.set", KVHistory.payload(101), "--json", "--coordinator", cluster.control,
             "--timeout", "\(Self.stallBound.components.seconds)"])
        #expect(first.status == 0, "\(first)")
        let firstResult = try JSONDecoder().decode(ResultView.JSON.self, from: Data(first.output.utf8))
        history.record(key: KVHistory.key(101), value: 101, sequence: firstResult.seq)
        #expect(firstResult.stores["kv"]?.status == "ok", "\(firstResult)")
        #expect(firstResult.outcomes.contains { $0.worker == "r3" && $0.status == "unknown" }, "\(firstResult.outcomes)")

        // The bus keeps dispatching while r3 is stopped, well past its liveness deadline (4 heartbeats), each dispatch
        // within the bound.
        let pausedUntil = ContinuousClock.now.advanced(by: .milliseconds(4 * Cluster.heartbeatMilliseconds + 1_500))
        var index = 102
        while ContinuousClock.now < pausedUntil {
            try await history.dispatch(index, client: client, timeout: Self.stallBound)
            index += 1
        }
        let whileStopped = try await client.status()
        #expect(whileStopped.workers.first { $0.id == "r3" }?.state == .lost)
        kill(stopped, SIGCONT)

        try await history.expectReplicasHold(3, client: client, cluster: cluster)
        #expect(try await client.status().workers.allSatisfy { $0.state == .live })
        await client.close()
        let statuses = await cluster.stop()
        #expect(statuses["r3"] == 0, "r3 exited \(statuses["r3"].map(String.init) ?? "?")")
        for id in ["r1", "r2", "r3"] { try history.expectJournal(Self.journal(cluster, id), of: id) }
    }

    @Test func aReplicaLosingMessagesOnItsSubscriptionStillAppliesEveryActionInOrder() async throws {
        let cluster = try Cluster()
        try cluster.startCoordinator(Self.fastCoordinator)
        try cluster.startWorker("r1", stores: ["kv=kv"], extra: ["--journal", Self.journal(cluster, "r1").path])
        try cluster.startWorker("r2", stores: ["kv=kv"], extra: ["--journal", Self.journal(cluster, "r2").path])
        try cluster.startWorker(
            "lossy", stores: ["kv=kv"], extra: ["--drop-published", "0.1", "--journal", Self.journal(cluster, "lossy").path])
        let client = try await cluster.client()
        try await cluster.waitUntilLive(3, client: client)

        var history = KVHistory()
        for index in 1...1_000 { try await history.dispatch(index, client: client) }
        try await history.expectReplicasHold(3, client: client, cluster: cluster)
        await client.close()
        await cluster.stop()
        // The lossy replica, like the others, applied every dispatch of the run once, in order, with no hole.
        for id in ["r1", "r2", "lossy"] { try history.expectJournal(Self.journal(cluster, id), of: id) }
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
