import Flux
@testable import FluxBus
import FluxBusProtocol
import Testing

/// Gap repair with a batch in flight: PUB/SUB loses a batch's ACTIONs together (they travel in one BUNDLE), and the
/// worker that lost them knows nothing of them. Repair must take a bounded number of round trips however many
/// actions were lost, not one re-send per action.
@Suite("Simulated repair of a lost batch")
struct RepairScenarioTests {
    static let batchSize = 100

    /// A cluster with every worker live, and a batch of `batchSize` actions whose ACTIONs worker `w2` never gets on
    /// PUB. Returns the cluster, the batch, when it was sent, and the ACTIONs the coordinator sent `w2` directly.
    static func loseABatch(seed: UInt64) -> (SimCluster, SimClient.Request, sentAt: Int64, direct: () -> [UInt64]) {
        // The real coordinator's heartbeat interval, longer than its first re-send (200 ms): a HEARTBEAT on PUB, which
        // names the last sequence published, comes too late to be what repairs the loss.
        let cluster = SimCluster(seed: seed, faults: .nothing, actionsPerClient: 3, idleClients: 1, heartbeatInterval: .milliseconds(500))
        cluster.run(until: 60_000_000) { cluster in
            cluster.checker.acknowledged.count == 9
                && cluster.coordinator?.membership.workers.values.filter { $0.state == .live }.count == 4
        }
        let ids = (0..<batchSize).map { _ in cluster.checker.newActionID() }
        let batch = SimClient.Request(
            requestID: "batch", actionIDs: ids, payloads: ids.map { Array("{\"id\":\($0)}".utf8) }, sentAt: cluster.now)
        let first = (cluster.coordinator?.lastSequence ?? 0) + 1
        let batchSequences = first...(first + UInt64(batchSize) - 1)
        // A BUNDLE is lost whole: it is one ZeroMQ message.
        cluster.losesPublished = { message, worker in
            worker == 1 && actionSequences(in: message, cluster).contains(where: batchSequences.contains)
        }
        var direct: [UInt64] = []
        cluster.watchesDirectSends = { message, worker in
            if worker == 1 { direct += actionSequences(in: message, cluster) }
        }
        cluster.checker.requested(batch)
        var client = cluster.clients[3]
        client.asksAgainForUnknown = false
        client.adopt(batch, at: cluster.now, cluster: cluster)
        cluster.clients[3] = client
        return (cluster, batch, cluster.now, { direct })
    }

    /// The sequences of the ACTIONs in a message, bundled or not.
    static func actionSequences(in message: Message, _ cluster: SimCluster) -> [UInt64] {
        let messages = (try? cluster.codec.decodeAll(cluster.codec.encode(message))) ?? []
        return messages.compactMap { if case .action(let action) = $0 { action.sequence } else { nil } }
    }

    /// The batch completes with every outcome known, w2's included, and w2 was sent each lost ACTION again once: one
    /// round trip for the whole batch.
    @Test(arguments: [7, 8, 9] as [UInt64])
    func aWorkerThatLostAWholeBatchRepairsItInOneRoundTrip(seed: UInt64) throws {
        let (cluster, batch, sentAt, direct) = Self.loseABatch(seed: seed)
        cluster.run(until: cluster.now + 30_000_000) { $0.clients[3].request == nil }
        let elapsed = cluster.now - sentAt
        let answer = try #require(cluster.checker.answers[batch.requestID], "the batch was answered")
        #expect(answer.outcomes.allSatisfy { $0.status != .unknown }, "no replica was written off: \(answer.outcomes)")
        // Simulated time, not a timer: 200 ms to the first re-send, then one round trip and the batch's work. One
        // re-send per action, as before, took 100 × 200 ms.
        #expect(elapsed < 1_000_000, "answered after \(elapsed) µs of simulated time")
        let resent = direct()
        #expect(Set(resent).count == Self.batchSize, "every lost ACTION was sent again: \(Set(resent).count)")
        #expect(resent.count <= Self.batchSize + 10, "each about once, not once per dispatch ahead: \(resent.count)")
        #expect(ScenarioTests.settle(cluster), "\(cluster.checker.recentSteps.suffix(10))")
        #expect(cluster.checker.violation == nil, "\(cluster.checker.violation ?? "")")
        #expect(ScenarioTests.ledger(cluster, 0) == ScenarioTests.ledger(cluster, 1))
    }
}
