import Flux
@testable import FluxBus
import FluxBusProtocol
import Testing

/// A batch in flight when the coordinator loses power: w2, the other ledger replica, is busy in a handler, so none of
/// the batch completes, while w1 applies all of it. The restarted coordinator publishes the whole batch again, and w1
/// must answer each ACTION from memory, or, when the same power cut restarted it (one machine runs both), from its
/// checkpoint. It remembered 4,096 acknowledgements and its checkpoint 64, and it was written off for the rest, their
/// outcomes unknown.
@Suite("Simulated: a large batch acknowledged again after a power cut")
struct CheckpointBatchScenarioTests {
    @Test("w1 answers the whole batch again", arguments: [
        (size: 150, restartsWorker: true), (size: 4_500, restartsWorker: false),
    ])
    func theWholeBatchIsAnsweredAgain(size: Int, restartsWorker: Bool) {
        let cluster = SimCluster(
            seed: 8, faults: .nothing, topology: SimTopology(stores: [[SimLedger.self], [SimLedger.self]]), actionsPerClient: 0,
            idleClients: 1)
        cluster.run(until: 60_000_000) { cluster in
            cluster.coordinator?.membership.workers.values.filter { $0.state == .live }.count == 2
        }
        cluster.makeBusy(1, for: 4_000_000)
        let ids = (0..<size).map { _ in cluster.checker.newActionID() }
        let batch = SimClient.Request(
            requestID: "big", actionIDs: ids, payloads: ids.map { Array("{\"id\":\($0)}".utf8) }, sentAt: cluster.now)
        cluster.checker.requested(batch)
        var client = cluster.clients[3]
        client.adopt(batch, at: cluster.now, cluster: cluster)
        cluster.clients[3] = client
        let applied = cluster.run(until: cluster.now + 3_500_000) { cluster in
            let node = cluster.workers[0]
            return (restartsWorker ? node.checkpoint?.lastApplied : node.engine?.lastApplied) ?? 0 >= UInt64(size)
                && cluster.coordinator.map { $0.lastCompleted == 0 } == true
        }
        #expect(applied, "w1 applied the whole batch while none of it completed")
        if restartsWorker {
            #expect(cluster.workers[0].checkpoint?.acknowledged.count == size, "\(cluster.workers[0].checkpoint?.acknowledged.count ?? 0)")
        }

        // The power cut: the coordinator stops, its commits kept; w1 stops with it and starts from its checkpoint.
        cluster.crashCoordinator()
        if restartsWorker {
            cluster.crashWorker(0)
            cluster.startWorker(0, withCheckpoint: true)
        }
        let lost = BusyWorkerScenarioTests.writtenOff(cluster, within: 12_000_000)
        #expect(!lost.contains("w1"), "w1 was written off: \(lost.sorted())")
        #expect(ScenarioTests.settle(cluster), "\(cluster.checker.recentSteps.suffix(10))")
        #expect(cluster.checker.violation == nil, "\(cluster.checker.violation ?? "")")
        // The batch's answer names the outcomes that were not ok: the ledger refuses some ids, but none is unknown.
        let answer = cluster.checker.answers["big"]?.outcomes ?? []
        #expect(!answer.isEmpty && !answer.contains { $0.status == .unknown }, "\(answer.filter { $0.status == .unknown })")
    }
}
