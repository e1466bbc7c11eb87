import Flux
@testable import FluxBus
import FluxBusProtocol
import Testing

/// A store new to the bus builds its state from the history (docs/PROTOCOL.md, "A store's history"): its first
/// replica replays the dispatches that completed before it joined, and every later replica, joining by replay or
/// from a snapshot, ends in the same state. The checker holds every replica to the model, which knows the rule.
@Suite("Simulation: histories")
struct HistoryScenarioTests {
    static func tally(_ cluster: SimCluster, _ index: Int) -> [UInt32]? {
        (cluster.workers[index].engine?.storesByName[SimTally.name]?.instance as? SimTally)?.state.ids
    }

    /// The ids dispatched at `range`, in order.
    static func ids(_ cluster: SimCluster, _ range: Range<UInt64>) -> [UInt32] {
        range.compactMap { cluster.checker.order[$0] }
    }

    /// The tally joins after 30 dispatches: it holds them, and a second replica that joins later, by replay, agrees.
    @Test func aLateStoreReplaysTheHistoryAndASecondReplicaAgrees() throws {
        let cluster = SimCluster(seed: 11, faults: .nothing, topology: .lateTally, actionsPerClient: 30, workersDown: [2, 3])
        cluster.run(until: 60_000_000) { $0.checker.acknowledged.count >= 30 }
        #expect(cluster.disk.histories[SimTally.name] == nil, "nobody hosts the tally yet")
        cluster.retired = [3]
        cluster.startWorker(2, withCheckpoint: false)
        cluster.run(until: cluster.now + 60_000_000) { $0.checker.acknowledged.count >= 60 }
        let history = try #require(cluster.disk.histories[SimTally.name])
        #expect(history.from == 1 && history.before > 30, "the tally replays what completed before it joined")
        cluster.retired = []
        cluster.startWorker(3, withCheckpoint: false)
        #expect(ScenarioTests.settle(cluster), "\(cluster.checker.recentSteps.suffix(10))")
        #expect(cluster.checker.violation == nil, "\(cluster.checker.violation ?? "")")
        let first = try #require(Self.tally(cluster, 2))
        #expect(Array(first.prefix(Int(history.before) - 1)) == Self.ids(cluster, 1..<history.before))
        #expect(first.count > 80 && first.count <= 90, "every dispatch but those in flight when it joined")
        #expect(Self.tally(cluster, 3) == first)
    }

    /// The log was compacted before the tally first joined: its history starts where the log does, the status says
    /// so, and a replica that joins after the tally's own snapshot agrees with the first.
    @Test func aLateStoreAfterCompactionStartsWhereTheLogDoes() throws {
        let cluster = SimCluster(seed: 12, faults: .nothing, topology: .lateTally, actionsPerClient: 80, workersDown: [2, 3])
        cluster.run(until: 120_000_000) { ($0.disk.oldestSequence ?? 1) > 1 }
        let logStart = try #require(cluster.disk.oldestSequence)
        #expect(logStart > 1, "the log was compacted")
        cluster.retired = [3]
        cluster.startWorker(2, withCheckpoint: false)
        // Until the tally's own snapshot let the log be compacted past where the tally joined.
        cluster.run(until: cluster.now + 200_000_000) {
            ($0.disk.snapshots[SimTally.name]?.sequence ?? 0) > 0
                && ($0.disk.oldestSequence ?? 1) > ($0.disk.histories[SimTally.name]?.before ?? .max)
        }
        let history = try #require(cluster.disk.histories[SimTally.name])
        #expect(history.from == logStart, "its history starts where the log did")
        #expect(history.lacksStart)
        let status = try #require(cluster.coordinator?.status(requestID: "s").stores.first { $0.name == SimTally.name })
        #expect(status.historyFrom == logStart && status.historyBefore == history.before)
        #expect((cluster.disk.oldestSequence ?? 1) > history.before, "the history itself was compacted since")
        cluster.retired = []
        cluster.startWorker(3, withCheckpoint: false)
        #expect(ScenarioTests.settle(cluster), "\(cluster.checker.recentSteps.suffix(10))")
        #expect(cluster.checker.violation == nil, "\(cluster.checker.violation ?? "")")
        let first = try #require(Self.tally(cluster, 2))
        #expect(Array(first.prefix(Int(history.before - history.from))) == Self.ids(cluster, history.from..<history.before))
        #expect(Self.tally(cluster, 3) == first, "the replica restored from the tally's snapshot agrees")
    }

    /// The ledger joins late and its handler traps on an id dispatched before it joined: replaying its history, each
    /// ledger worker dies there, the coordinator marks that action poisoned for the ledger after three crashes, and
    /// both replicas skip it alike.
    @Test func aTrapInTheHistoryIsPoisonedLikeALiveOne() throws {
        let cluster = SimCluster(seed: 13, faults: .nothing, topology: .lateLedger, actionsPerClient: 10, workersDown: [2, 3])
        let trapping: UInt32 = 5
        cluster.ledgerTraps = [trapping]
        cluster.run(until: 60_000_000) { $0.checker.acknowledged.count >= 20 }
        cluster.retired = []
        cluster.startWorker(2, withCheckpoint: false)
        cluster.startWorker(3, withCheckpoint: false)
        #expect(ScenarioTests.settle(cluster, within: 120), "\(cluster.checker.recentSteps.suffix(12))")
        #expect(cluster.checker.violation == nil, "\(cluster.checker.violation ?? "")")
        let sequence = try #require(cluster.checker.order.first { $0.value == trapping }?.key)
        #expect(sequence < (cluster.disk.histories[SimLedger.name]?.before ?? 0), "the trap is in the ledger's history")
        let marks = cluster.coordinator?.log.poisonMarks ?? []
        #expect(marks.map(\.store) == [SimLedger.name] && marks.first?.sequence == sequence, "\(marks)")
        let ledgers = [ScenarioTests.ledger(cluster, 2), ScenarioTests.ledger(cluster, 3)]
        #expect(ledgers[0] != nil && ledgers[0] == ledgers[1])
        #expect(ledgers[0]?.contains(trapping) == false && (ledgers[0]?.count ?? 0) > 15)
    }

    /// Under each seed's swarm faults (crashes of the coordinator and of workers, lost messages, partitions, a damaged
    /// log), the tally's first replica joins late and its second later still: the checker holds both to the model's
    /// history, and they end equal.
    @Test(arguments: Array(UInt64(21)...120))
    func lateReplicasConvergeUnderSwarmFaults(seed: UInt64) {
        let cluster = SimCluster(seed: seed, topology: .lateTally, actionsPerClient: 30, workersDown: [2, 3])
        cluster.run(until: 20_000_000) { $0.checker.acknowledged.count >= 20 }
        cluster.retired = [3]
        cluster.startWorker(2, withCheckpoint: false)
        cluster.run(until: cluster.now + 20_000_000) { $0.checker.acknowledged.count >= 50 }
        cluster.retired = []
        if cluster.workers[3].engine == nil { cluster.startWorker(3, withCheckpoint: false) }
        #expect(ScenarioTests.settle(cluster, within: 120), "\(cluster.checker.recentSteps.suffix(12))")
        #expect(cluster.checker.violation == nil, "\(cluster.checker.violation ?? "")")
        #expect(Self.tally(cluster, 2) != nil && Self.tally(cluster, 2) == Self.tally(cluster, 3))
    }
}
