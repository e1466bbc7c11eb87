import Flux
@testable import FluxBus
import FluxBusProtocol
import Testing

/// The coordinator publishes a commit's ACTIONs while its log syncs that commit, and tells no one of them until the
/// sync is done (docs/ARCHITECTURE.md, "Publishing while the log syncs"). These scenarios strike while the sync
/// hangs, after the ACTIONs reached the workers. Every seed of the swarm also checks the order itself: no RESULT,
/// BATCH_RESULT or COMPLETED names a sequence the log has not synced.
@Suite("Simulated faults while the log syncs")
struct SyncScenarioTests {
    /// The first seeds (at most `limit`) whose runs reach a sync holding the action just published, after a few
    /// answers (an action logged while another was in flight was synced with that one's commit): each cluster, and
    /// that sequence, struck by `fault` there.
    static func strikes(by fault: SimCluster.SyncFault, limit: Int) -> [(SimCluster, UInt64)] {
        var found: [(SimCluster, UInt64)] = []
        for seed in UInt64(1)...80 where found.count < limit {
            let cluster = SimCluster(seed: seed, faults: .nothing, actionsPerClient: 10)
            var struckAt: UInt64?
            cluster.faultDuringSync = { cluster in
                guard cluster.checker.acknowledged.count >= 3, struckAt == nil, let published = cluster.coordinator?.lastSequence,
                    (cluster.disk.newestSynced ?? 0) < published
                else { return nil }
                struckAt = published
                return fault
            }
            // Until the fault has struck, not only been drawn: the sync hangs a while first.
            _ = cluster.run(until: 60_000_000) { $0.syncFaults > 0 }
            if let struckAt, cluster.syncFaults > 0 { found.append((cluster, struckAt)) }
        }
        return found
    }

    static func struck(by fault: SimCluster.SyncFault) -> (SimCluster, UInt64)? { strikes(by: fault, limit: 1).first }

    /// A crash of the coordinator's process during the sync loses nothing: the page cache holds the commit. A power
    /// cut that the disk survived (it had written the commit) is the same. Either way the restarted coordinator
    /// dispatches the action again under its next epoch, it runs once, and its request is answered.
    @Test("a crash, or a power cut the commit survived, during the sync loses nothing", arguments: [
        SimCluster.SyncFault.crash, .powerCut(keeping: true),
    ])
    func aFaultThatKeepsTheCommitLosesNothing(_ fault: SimCluster.SyncFault) {
        guard let (cluster, sequence) = Self.struck(by: fault) else { return #expect(Bool(false), "no seed reached the fault") }
        #expect(ScenarioTests.settle(cluster), "\(cluster.checker.recentSteps.suffix(10))")
        #expect(cluster.checker.violation == nil, "\(cluster.checker.violation ?? "")")
        #expect(cluster.disk.epochs.count == 2, "one restart")
        #expect(cluster.checker.publishedEpochs[sequence]?.count == 2, "#\(sequence) dispatched again under the new epoch")
        #expect(cluster.checker.acknowledged[sequence] != nil, "#\(sequence) was kept, and answered")
        #expect(cluster.checker.acknowledged.count == 30, "every action answered")
        #expect(cluster.storageStops.isEmpty)
        #expect(ScenarioTests.ledger(cluster, 0) == ScenarioTests.ledger(cluster, 1))
    }

    /// A power cut that loses the commit after its ACTION reached the replicas. No client was told of that action,
    /// so no answer is lost; but the replicas applied what the log no longer holds. The restarted coordinator finds
    /// them ahead of its log and stops, naming them, rather than number another action the same.
    @Test func aPowerCutThatLostTheCommitIsRefusedLoudly() {
        guard let (cluster, lost) = Self.struck(by: .powerCut(keeping: false)) else {
            return #expect(Bool(false), "no seed reached the fault")
        }
        let stopped = cluster.run(until: 60_000_000) { !$0.storageStops.isEmpty }
        #expect(stopped, "\(cluster.checker.recentSteps.filter { $0.contains("fault") || $0.contains("coordinator") }.prefix(20))")
        #expect(cluster.checker.violation == nil, "\(cluster.checker.violation ?? "")")
        #expect(cluster.disk.newestSequence == lost - 1, "the log lost #\(lost) and kept what was synced before it")
        #expect(cluster.checker.acknowledged[lost] == nil, "no client was told of #\(lost)")
        #expect(cluster.checker.acknowledged.keys.allSatisfy { $0 < lost })
        let stop = cluster.storageStops.first ?? ""
        #expect(stop.contains("applied up to #\(lost), but this coordinator's log ends at #\(lost - 1)"), "\(stop)")
    }

    /// The same power cut, then the operator's recovery, on several seeds: the coordinator started once with
    /// `--new-bus` refuses the workers whose history the log no longer holds (REJECT 9), they are restarted empty and
    /// catch up from the log, and the bus goes on. Every request is answered, each action once, and every replica
    /// ends as the total order says. Where a client's retry took the lost sequence again with the same action, the
    /// workers that applied it hold the same history as the log, and are welcomed.
    @Test func anOperatorRecoversFromALostCommitWithNewBus() {
        let runs = Self.strikes(by: .powerCut(keeping: false), limit: 6)
        #expect(runs.count == 6, "seeds that reached the fault: \(runs.count)")
        var refusedAndRestarted = 0
        for (cluster, lost) in runs {
            cluster.operatorRecoversFromAheadWorkers = true
            #expect(ScenarioTests.settle(cluster, within: 60), "seed \(cluster.seed): \(cluster.checker.recentSteps.suffix(12))")
            #expect(cluster.checker.violation == nil, "seed \(cluster.seed): \(cluster.checker.violation ?? "")")
            #expect(cluster.storageStops.count <= 1, "seed \(cluster.seed): \(cluster.storageStops)")
            #expect(cluster.checker.acknowledged.count == 30, "seed \(cluster.seed): every action answered")
            #expect(cluster.checker.acknowledged[lost] != nil, "seed \(cluster.seed): #\(lost) went to an action after all")
            #expect(ScenarioTests.ledger(cluster, 0) == ScenarioTests.ledger(cluster, 1), "seed \(cluster.seed)")
            refusedAndRestarted += cluster.restartedEmptyByOperator > 0 ? 1 : 0
        }
        print("power cut losing a commit, then --new-bus: \(refusedAndRestarted) of \(runs.count) seeds refused a worker and restarted it empty")
        #expect(refusedAndRestarted >= 1, "no seed had the lost sequence go to another action, so none refused a worker")
    }

    /// Under swarm faults, with power cuts that lose commits among the faults during a sync and an operator who
    /// recovers as OPERATIONS.md says, every seed keeps every invariant and settles: no answer is lost or untrue, and
    /// no replica diverges. (The swarm of `SimulationTests` has no operator, so its power cuts keep the commit.) Every
    /// seed of 1-640 holds since the fixes this test found (docs/ARCHITECTURE.md, "Publishing while the log syncs");
    /// `make test` runs the first 40 and those beyond that failed before a fix.
    @Test func powerCutsThatLoseCommitsUnderSwarmFaults() {
        var (lost, stops, failed) = (0, 0, [String]())
        // 1-40, and seeds beyond that each failed before a fix: 64, 110, 127 and 140 without the worker's check of the
        // action in hand; 100 and 464 without HELLO's `appliedEpoch` (a worker welcomed after the log lost the entry it
        // applied and logged the same action there again); 151 and 519 while a later epoch's RELEASE could settle the
        // lost dispatch in hand before that epoch's ACTION showed it was another.
        let seeds = Array(UInt64(1)...40) + [64, 100, 110, 127, 140, 151, 464, 519]
        for seed in seeds {
            var random = SplitMix64(seed: seed ^ 0x1057_C0DE)
            var plan = FaultPlan.swarm(using: &random)
            plan.crashDuringSync = 0.05
            plan.powerCutsLoseCommits = true
            let run = SimulationRun(seed: seed, faults: plan)
            if let violation = run.violation { failed.append("seed \(seed): \(violation)") }
            lost += run.lostCommits
            stops += run.storageStops
        }
        print("power cuts losing commits under swarm faults: \(seeds.count) seeds, \(lost) commits lost, \(stops) stops for an operator")
        #expect(failed.isEmpty, "\(failed.prefix(3))")
        #expect(lost >= 10, "the faults struck: \(lost)")
    }

    /// A store beside its dependent on one worker runs, and then waits with the dispatch in hand for the dependency's
    /// RELEASE: a power cut may lose that entry meanwhile. A client once read such a store's state at the lost entry,
    /// from the worker and through a restarted coordinator whose log held another entry there (seeds 21, 55, 63 and 78
    /// of this mix, and 14 more of 1-400). The worker now refuses to serve a store that ran an entry the restarted
    /// coordinator has not confirmed, and the coordinator refuses a state beyond its log.
    @Test func aStateReadNeverServesAnEntryAPowerCutLost() {
        var (lost, failed) = (0, [String]())
        let seeds = Array(UInt64(1)...40) + [55, 63, 78]
        for seed in seeds {
            var random = SplitMix64(seed: seed ^ 0xC0B1_1ED)
            var plan = FaultPlan.swarm(using: &random)
            plan.crashDuringSync = 0.05
            plan.powerCutsLoseCommits = true
            plan.readFailure = 0.03
            if Bool.random(using: &random) { plan.logDamage = Double.random(in: 0.3...1, using: &random) }
            if Bool.random(using: &random) {
                plan.busyRate = Double.random(in: 0.05...0.4, using: &random)
                plan.stopWhileBusy = Double.random(in: 0...0.5, using: &random)
            }
            let run = SimulationRun(seed: seed, faults: plan, topology: .colocatedDependent)
            if let violation = run.violation { failed.append("seed \(seed): \(violation)") }
            lost += run.lostCommits
        }
        print("state reads beside a dependent, with power cuts that lose commits: \(seeds.count) seeds, \(lost) commits lost")
        #expect(failed.isEmpty, "\(failed.prefix(3))")
        #expect(lost >= 10, "the faults struck: \(lost)")
    }
}
