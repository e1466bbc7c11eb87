import Flux
@testable import FluxBus
import FluxBusProtocol
import Testing

/// A poison action, scripted on the simulator: the ledger's handler traps on one id on every replica, so each
/// ledger worker dies running it, live and again on every replay after a restart. The restarted workers report the
/// crashes; at the third the coordinator marks the action poisoned for the ledger, both replicas skip it alike, and
/// the bus settles with every invariant holding (the checker's model has no ledger replica ever hold that id).
@Suite("Simulated poison actions")
struct PoisonScenarioTests {
    @Test(arguments: [UInt64(11), 12, 13])
    func aTrappingHandlerIsPoisonedAndEveryReplicaSkipsIt(seed: UInt64) {
        let cluster = SimCluster(seed: seed, faults: .nothing, actionsPerClient: 10)
        let trapping: UInt32 = 5
        cluster.ledgerTraps = [trapping]
        #expect(ScenarioTests.settle(cluster, within: 120), "\(cluster.checker.recentSteps.suffix(12))")
        #expect(cluster.checker.violation == nil, "\(cluster.checker.violation ?? "")")
        #expect(cluster.checker.acknowledged.count == 30, "every action answered")

        let sequence = cluster.checker.order.first { $0.value == trapping }?.key
        let marks = cluster.coordinator?.log.poisonMarks ?? []
        #expect(marks.map(\.store) == [SimLedger.name] && marks.first?.sequence == sequence, "\(marks)")
        #expect(cluster.handlerTraps >= 3, "the mark needs three crashes, got \(cluster.handlerTraps)")
        #expect(marks.first?.reason.contains("SIGILL") == true)

        // Both ledger replicas skipped it, and agree.
        let ledgers = [ScenarioTests.ledger(cluster, 0), ScenarioTests.ledger(cluster, 1)]
        #expect(ledgers[0] != nil && ledgers[0] == ledgers[1])
        #expect(ledgers[0]?.contains(trapping) == false)

        // The request id's recorded answer, what the client asking again gets, says poisoned where it said unknown.
        let recorded = cluster.disk.requests.values.compactMap(\.answer).flatMap { answer -> [Outcome] in
            switch answer {
            case .result(let result) where result.sequence == sequence: result.outcomes
            case .batchResult(let batch): batch.failures.filter { $0.sequence == sequence }.map(\.outcome)
            default: []
            }
        }
        #expect(recorded.contains { $0.store == SimLedger.name && $0.status == .poisoned }, "\(recorded)")
        #expect(!recorded.contains { $0.store == SimLedger.name && $0.status == .unknown }, "\(recorded)")
    }

    /// Only w1's ledger traps on the id (its own build or environment); w2's applies it. The coordinator must not mark
    /// it poisoned, since skipping it on w1 would make w1 differ from w2: w1 crash-loops, loudly, and w2 goes on. Once
    /// w1 is fixed it catches up, applies the id, and the replicas agree.
    @Test func aCrashOfOneReplicaOnlyIsNeverPoisoned() {
        let cluster = SimCluster(seed: 21, faults: .nothing, actionsPerClient: 10)
        cluster.trapsOnlyOn = [0]
        cluster.ledgerTraps = [5]
        cluster.run(until: 40_000_000) { $0.handlerTraps >= 5 }
        #expect(cluster.handlerTraps >= 5, "w1 kept crashing: \(cluster.handlerTraps)")
        #expect(cluster.checker.violation == nil, "\(cluster.checker.violation ?? "")")
        #expect(cluster.disk.poison.isEmpty, "\(cluster.disk.poison)")
        #expect((cluster.coordinator?.handlerCrashes.worst(of: SimLedger.name)?.count ?? 0) >= 3, "the bound was reached, and refused")
        #expect(ScenarioTests.ledger(cluster, 1)?.contains(5) == true, "w2 applied the id")

        cluster.ledgerTraps = []   // w1 is fixed
        #expect(ScenarioTests.settle(cluster, within: 60), "\(cluster.checker.recentSteps.suffix(12))")
        #expect(cluster.checker.violation == nil, "\(cluster.checker.violation ?? "")")
        #expect(cluster.disk.poison.isEmpty)
        #expect(ScenarioTests.ledger(cluster, 0) == ScenarioTests.ledger(cluster, 1))
        #expect(ScenarioTests.ledger(cluster, 0)?.contains(5) == true)
    }
}
