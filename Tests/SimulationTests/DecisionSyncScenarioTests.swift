import Flux
@testable import FluxBus
import FluxBusProtocol
import Testing

/// A decision's RELEASE goes out once its commit is done, while the disk syncs it (docs/ARCHITECTURE.md, "Publishing
/// while the log syncs"). A crash loses nothing then: the page cache holds the commit. A power cut may lose the
/// decision after the audit's replicas read it; the restart then decides the ledger again. These scenarios cut the
/// power while such a sync hangs, the ledger's decision `ok` and already read.
@Suite("Simulated power cuts while a decision syncs")
struct DecisionSyncScenarioTests {
    /// The first seed whose run reaches a sync of the ledger's `ok` decision after its RELEASE went out: its cluster,
    /// cut there (the ledger's replicas crashed for good too when `losingTheLedger`), and that sequence.
    static func cut(losingTheLedger: Bool, mutation: PlantedBug? = nil) -> (SimCluster, UInt64)? {
        for seed in UInt64(1)...40 {
            let cluster = SimCluster(seed: seed, faults: .nothing, actionsPerClient: 10, mutation: mutation)
            var struckAt: UInt64?
            cluster.faultDuringSync = { cluster in
                guard struckAt == nil, cluster.checker.acknowledged.count >= 3, let flights = cluster.coordinator?.flights,
                    let open = flights.openSequences
                else { return nil }
                for sequence in open {
                    guard let index = flights.index(of: sequence), flights[index].isReleased(SimLedger.name),
                        cluster.disk.decisions[sequence]?.contains(where: { $0.store == SimLedger.name && $0.status == .ok }) == true,
                        cluster.disk.syncedDecisions[sequence]?.contains(where: { $0.store == SimLedger.name }) != true
                    else { continue }
                    struckAt = sequence
                    if losingTheLedger {
                        cluster.retired = [0, 1]
                        cluster.crashWorker(0)
                        cluster.crashWorker(1)
                    }
                    return .powerCut(keeping: false)
                }
                return nil
            }
            _ = cluster.run(until: 60_000_000) { $0.syncFaults > 0 }
            if let struckAt, cluster.syncFaults > 0 { return (cluster, struckAt) }
        }
        return nil
    }

    /// The audit's replicas read the ledger `ok`; the log lost that, the ledger's replicas are gone, and the restart
    /// decides the ledger `unknown`. The audit's replicas re-acknowledge saying what they read, and the coordinator
    /// stops, naming them, before it tells anyone of the dispatch: answered, it would say the audit ran on a ledger
    /// the history says was lost, and a replica replaying that history would skip it.
    @Test func aDecisionLostAfterItWasReadStopsTheCoordinatorLoudly() {
        guard let (cluster, sequence) = Self.cut(losingTheLedger: true) else {
            return #expect(Bool(false), "no seed reached the fault")
        }
        #expect(cluster.disk.decisions[sequence]?.contains { $0.store == SimLedger.name } != true, "the power cut lost the decision")
        let stopped = cluster.run(until: 60_000_000) { !$0.storageStops.isEmpty }
        #expect(stopped, "\(cluster.checker.recentSteps.suffix(12))")
        #expect(cluster.checker.violation == nil, "\(cluster.checker.violation ?? "")")
        let stop = cluster.storageStops.first ?? ""
        #expect(stop.contains("store `audit` on worker `w3`, store `audit` on worker `w4` applied #\(sequence) reading outcomes"), "\(stop)")
        #expect(cluster.checker.acknowledged[sequence] == nil, "no client was told of #\(sequence)")
    }

    /// The recovery OPERATIONS.md gives: the operator restarts the replicas named with empty state, they replay the
    /// log's history (the ledger lost, so the audit skipped), and the restarted coordinator goes on. Every request is
    /// answered, the audit's replicas agree, and nothing told is untrue.
    @Test func anOperatorRecoversByRestartingTheReplicasNamedEmpty() {
        guard let (cluster, sequence) = Self.cut(losingTheLedger: true) else {
            return #expect(Bool(false), "no seed reached the fault")
        }
        cluster.operatorRestartsMisreadReplicas = true
        #expect(ScenarioTests.settle(cluster, within: 60), "\(cluster.checker.recentSteps.suffix(12))")
        #expect(cluster.checker.violation == nil, "\(cluster.checker.violation ?? "")")
        #expect(cluster.storageStops.count == 1, "\(cluster.storageStops)")
        #expect(cluster.restartedEmptyByOperator == 2, "w3 and w4 started over")
        #expect(cluster.checker.acknowledged[sequence] != nil, "#\(sequence) answered once the replicas started over")
        #expect(cluster.checker.acknowledged.count == 30, "every action answered")
    }

    /// Under swarm faults, with power cuts that lose commits among the faults during a sync and an operator who
    /// recovers as OPERATIONS.md says, every seed keeps every invariant and settles: no answer is lost or untrue, and
    /// no replica diverges, whichever commit (actions, decisions) a power cut took.
    @Test func powerCutsThatLoseCommitsUnderSwarmFaults() {
        var (lost, stops, failed) = (0, 0, [String]())
        for seed in UInt64(1)...40 {
            var random = SplitMix64(seed: seed ^ 0x1057_C0DE)
            var plan = FaultPlan.swarm(using: &random)
            plan.crashDuringSync = 0.05
            plan.powerCutsLoseCommits = true
            let run = SimulationRun(seed: seed, faults: plan)
            if let violation = run.violation { failed.append("seed \(seed): \(violation)") }
            lost += run.lostCommits
            stops += run.storageStops
        }
        print("power cuts losing commits under swarm faults: 40 seeds, \(lost) commits lost, \(stops) stops for an operator")
        #expect(failed.isEmpty, "\(failed.prefix(3))")
        #expect(lost >= 10, "the faults struck: \(lost)")
    }

    /// The control: a coordinator that does not check what the dependents read answers for the dispatch, and a replica
    /// of the audit that starts over replays the ledger as lost, skips the audit, and diverges from its peer.
    @Test func withoutTheCheckTheLostDecisionGoesUnseen() {
        guard let (cluster, sequence) = Self.cut(losingTheLedger: true, mutation: .coordinatorIgnoresWhatDependentsRead) else {
            return #expect(Bool(false), "no seed reached the fault")
        }
        _ = cluster.run(until: 60_000_000) { $0.checker.acknowledged[sequence] != nil || $0.checker.violation != nil }
        cluster.crashWorker(3)
        cluster.workers[3].checkpoint = nil
        cluster.startWorker(3, withCheckpoint: false)
        _ = ScenarioTests.settle(cluster)
        #expect(cluster.storageStops.isEmpty)
        let violation = cluster.checker.violation ?? ""
        #expect(violation.contains("was told audit applied #\(sequence), but w4 failed or skipped it"), "\(violation)")
    }

    /// The same power cut with the ledger's replicas alive: they re-acknowledge the same results from memory, the
    /// restart decides the ledger as before, and the audit's replicas read what the log now records. Nothing stops.
    @Test func aDecisionLostAndDecidedAlikeLosesNothing() {
        guard let (cluster, sequence) = Self.cut(losingTheLedger: false) else {
            return #expect(Bool(false), "no seed reached the fault")
        }
        #expect(ScenarioTests.settle(cluster), "\(cluster.checker.recentSteps.suffix(12))")
        #expect(cluster.checker.violation == nil, "\(cluster.checker.violation ?? "")")
        #expect(cluster.storageStops.isEmpty, "\(cluster.storageStops)")
        #expect(cluster.disk.decisions[sequence]?.contains { $0.store == SimLedger.name && $0.status == .ok } == true)
        #expect(cluster.checker.acknowledged[sequence] != nil, "#\(sequence) answered")
        #expect(cluster.checker.acknowledged.count == 30, "every action answered")
        #expect(ScenarioTests.ledger(cluster, 0) == ScenarioTests.ledger(cluster, 1))
    }
}
