import Flux
@testable import FluxBus
import FluxBusProtocol
import Testing

/// Recovery paths, each scripted on the simulator with no random fault: the real coordinator engine against real
/// worker engines, in simulated time. Each runs the full invariant checker as well as its own expectations.
@Suite("Simulated recovery scenarios")
struct ScenarioTests {
    /// Runs until every request is answered and every replica caught up, then checks the whole histories.
    static func settle(_ cluster: SimCluster, within seconds: Int64 = 30) -> Bool {
        cluster.quiesce()
        let settled = cluster.run(until: cluster.now + seconds * 1_000_000) { SimulationRun.settled($0) }
        cluster.checker.checkAtEnd()
        return settled
    }

    static func ledger(_ cluster: SimCluster, _ index: Int) -> [UInt32]? {
        (cluster.workers[index].engine?.storesByName[SimLedger.name]?.instance as? SimLedger)?.state
    }

    /// A coordinator that crashes while a dispatch is in flight, after a replica ran it, dispatches it again under
    /// its next epoch with the same sequence; the replicas that ran it re-acknowledge it from memory instead of
    /// applying it twice, and the client's retry under the same request id gets that sequence.
    @Test func theDispatchInFlightRunsOnceAcrossACoordinatorCrash() {
        let cluster = SimCluster(seed: 1, faults: .nothing, actionsPerClient: 4)
        var crashedAt: UInt64?
        // The first ACK that the coordinator waits for, once the workers are live (from #5 on).
        cluster.crashesCoordinatorOn = { cluster, messages in
            guard let open = cluster.coordinator?.flights.openSequences, open.lowerBound >= 5,
                messages.contains(where: { if case .ack(let ack) = $0 { ack.sequence == open.lowerBound } else { false } })
            else { return false }
            crashedAt = open.lowerBound
            return true
        }
        #expect(Self.settle(cluster), "\(cluster.checker.recentSteps.suffix(10))")
        #expect(cluster.checker.violation == nil, "\(cluster.checker.violation ?? "")")
        let sequence = crashedAt
        #expect(sequence != nil, "the coordinator crashed with a dispatch in flight")
        #expect(cluster.disk.epochs.count == 2, "one restart, so two epochs")
        #expect(sequence.flatMap { cluster.checker.publishedEpochs[$0]?.count } == 2, "dispatched again under the new epoch")
        #expect(cluster.checker.acknowledged.count == 12, "every action answered")
        #expect(sequence.flatMap { cluster.checker.acknowledged[$0] } != nil, "its request was told that sequence")
        #expect(Self.ledger(cluster, 0) == Self.ledger(cluster, 1))
    }

    /// A coordinator crash that damages the log (its tail cut, the mark beside it intact): the restarted coordinator
    /// refuses it instead of starting shorter, the operator restores it, and the bus goes on without losing anything.
    @Test func aDamagedLogIsRefusedAndARestoredOneGoesOn() {
        var plan = FaultPlan.nothing
        plan.logDamage = 1
        let cluster = SimCluster(seed: 3, faults: plan, actionsPerClient: 10)
        cluster.run(until: 60_000_000) { $0.checker.acknowledged.count >= 5 }
        cluster.crashCoordinator()
        #expect(cluster.damagedLogBackup != nil, "the crash damaged the log")
        #expect(Self.settle(cluster), "\(cluster.checker.recentSteps.suffix(10))")
        #expect(cluster.checker.violation == nil, "\(cluster.checker.violation ?? "")")
        #expect(cluster.logRefusals == 1, "the damaged log was refused once, the restored one started")
        #expect(cluster.checker.acknowledged.count == 30)
    }

    /// The invariant itself: a log whose tail is gone together with its mark starts (nothing can tell), and the
    /// checker reports the log as silently shortened.
    @Test func aLogShortenedWithItsMarkIsReportedByTheChecker() {
        let cluster = SimCluster(seed: 3, faults: FaultPlan(), actionsPerClient: 10)
        cluster.run(until: 60_000_000) { $0.checker.acknowledged.count >= 5 }
        cluster.crashCoordinator()
        cluster.disk.removeActions(after: (cluster.disk.newestSequence ?? 1) - 1)
        cluster.disk.mark.mark = nil
        cluster.run(until: cluster.now + 5_000_000)
        #expect(cluster.checker.violation?.contains("the log was silently shortened") == true, "\(cluster.checker.violation ?? "none")")
    }

    /// A ledger replica that vanishes for good is written off at the acknowledgement deadline; every later dispatch
    /// completes with the other replica, and says so.
    @Test func aReplicaThatVanishesIsWrittenOffAndTheBusGoesOn() {
        let cluster = SimCluster(seed: 2, faults: .nothing, actionsPerClient: 10)
        cluster.run(until: 60_000_000) { $0.checker.acknowledged.count >= 5 }
        cluster.retired = [1]
        cluster.crashWorker(1)
        #expect(Self.settle(cluster), "\(cluster.checker.recentSteps.suffix(10))")
        #expect(cluster.checker.violation == nil, "\(cluster.checker.violation ?? "")")
        #expect(cluster.checker.acknowledged.count == 30)
        // The last single dispatch's RESULT lists every replica's outcome (a BATCH_RESULT lists only failures).
        let last = cluster.checker.answers.values.filter { $0.outcomes.contains { $0.store == SimLedger.name } }
            .max { $0.sequence < $1.sequence }
        let ledgers = last?.outcomes.filter { $0.store == SimLedger.name && $0.status != .unknown } ?? []
        #expect(ledgers.map(\.worker) == ["w1"], "the last dispatch ran on the replica left")
    }

    /// A replica that first joins after the log was compacted starts from the snapshots a live replica gave, not
    /// from sequence 1, and ends equal to it.
    @Test func aLateReplicaJoinsFromASnapshotAfterCompaction() {
        let cluster = SimCluster(seed: 3, faults: .nothing, actionsPerClient: 30, workersDown: [1])
        cluster.run(until: 120_000_000) { $0.checker.acknowledged.count == 90 && ($0.disk.oldestSequence ?? 1) > 1 }
        let logStart = cluster.disk.oldestSequence ?? 1
        #expect(logStart > 1, "the log was compacted")
        #expect(cluster.disk.snapshots[SimLedger.name] != nil)
        cluster.retired = []
        cluster.startWorker(1, withCheckpoint: false)
        #expect(Self.settle(cluster), "\(cluster.checker.recentSteps.suffix(10))")
        #expect(cluster.checker.violation == nil, "\(cluster.checker.violation ?? "")")
        #expect(Self.ledger(cluster, 1) == Self.ledger(cluster, 0))
        #expect((Self.ledger(cluster, 1)?.count ?? 0) > 0)
    }

    /// A worker restarted from its checkpoint resumes where the checkpoint stood, catches up the rest, and applies
    /// nothing twice.
    @Test func aWorkerResumesFromItsCheckpoint() {
        let cluster = SimCluster(seed: 4, faults: .nothing, actionsPerClient: 10)
        cluster.run(until: 60_000_000) { $0.checker.acknowledged.count >= 12 && $0.workers[0].checkpoint != nil }
        let saved = cluster.workers[0].checkpoint?.lastApplied ?? 0
        #expect(saved > 0)
        cluster.crashWorker(0)
        cluster.startWorker(0, withCheckpoint: true)
        #expect(cluster.workers[0].engine?.lastApplied == saved, "resumed at the checkpoint's sequence")
        #expect(Self.settle(cluster), "\(cluster.checker.recentSteps.suffix(10))")
        #expect(cluster.checker.violation == nil, "\(cluster.checker.violation ?? "")")
        #expect(Self.ledger(cluster, 0) == Self.ledger(cluster, 1))
    }

    /// A coordinator that stops for three seconds (twenty liveness deadlines here) resumes without blaming its
    /// workers: none is written off, so no later dispatch's outcome is unknown.
    @Test func aStalledCoordinatorDoesNotBlameItsWorkers() {
        let cluster = SimCluster(seed: 5, faults: .nothing, actionsPerClient: 10)
        // Past the start, when the first dispatches find replicas still joining ("no live replica").
        cluster.run(until: 60_000_000) { cluster in
            cluster.checker.acknowledged.count >= 12
                && cluster.coordinator?.membership.workers.values.filter { $0.state == .live }.count == 4
        }
        let before = cluster.checker.acknowledged.keys.max() ?? 0
        cluster.stallCoordinator(for: 3_000_000)
        var lost: [String] = []
        let settled = cluster.run(until: cluster.now + 30_000_000) { cluster in
            for worker in cluster.coordinator?.membership.workers.values ?? [:].values where worker.state == .lost {
                lost.append(worker.id)
            }
            return SimulationRun.settled(cluster)
        }
        cluster.checker.checkAtEnd()
        #expect(settled, "\(cluster.checker.recentSteps.suffix(10))")
        #expect(cluster.checker.violation == nil, "\(cluster.checker.violation ?? "")")
        #expect(lost.isEmpty, "written off after the coordinator's own stall: \(Set(lost).sorted())")
        let unknown = cluster.checker.answers.values.filter { $0.sequence > before }.flatMap(\.outcomes)
            .filter { $0.status == .unknown }
        #expect(unknown.isEmpty, "after #\(before): \(unknown)")
        #expect(cluster.checker.acknowledged.count == 30)

        // The first thing a resumed coordinator handles may be its timer, before the messages that waited: still no
        // worker is written off.
        let coordinator = cluster.coordinator
        #expect(coordinator != nil)
        coordinator?.handle(.tick, at: MonotonicTime(nanoseconds: (cluster.now + 3_000_000) * 1_000))
        let states = coordinator?.membership.workers.values.map { "\($0.id) \($0.state)" }.sorted() ?? []
        #expect(states == ["w1 live", "w2 live", "w3 live", "w4 live"])
    }

    /// A store waiting for a store no worker hosts is never planned: every answer names it `skipped`, "not ready",
    /// instead of reading as a success, and the tally beside it runs as usual.
    @Test func aStoreWaitingForAStoreNobodyHostsIsReportedNotReady() {
        let cluster = SimCluster(seed: 3, faults: .nothing, topology: .missingDependency, actionsPerClient: 5)
        #expect(Self.settle(cluster), "\(cluster.checker.recentSteps.suffix(10))")
        #expect(cluster.checker.violation == nil, "\(cluster.checker.violation ?? "")")
        let answers = cluster.checker.answers.values
        #expect(!answers.isEmpty)
        for answer in answers {
            let audit = answer.outcomes.filter { $0.store == SimAudit.name }
            // One per action: a batch's answer lists each of its actions' failures.
            #expect(!audit.isEmpty && audit.allSatisfy { $0.status == .skipped && $0.message.hasPrefix("not ready: it waits for `ledger`") },
                    "\(answer.outcomes)")
        }
        #expect(answers.contains { $0.outcomes.contains { $0.store == SimTally.name && $0.status == .ok } })
    }

    /// A coordinator restarted while every worker hosting the ledger is down, and they stay down past its grace
    /// period: what it dispatches meanwhile still names the ledger (recorded `unknown`, not left out as if no store
    /// handled it), and its replicas apply all of it when they return. Before the log kept each store's declaration,
    /// those plans left the ledger out, and its replicas skipped the actions for good (an outside probe, with real
    /// processes, found it; `plansRecorded` is the invariant it gave the checker).
    @Test func aPreviousRunsStoreStaysInThePlansWhileItsWorkersAreAway() {
        let cluster = SimCluster(seed: 5, faults: .nothing, actionsPerClient: 20)
        cluster.run(until: 60_000_000) { $0.checker.acknowledged.count >= 6 }
        cluster.retired = [0, 1]
        cluster.crashWorker(0)
        cluster.crashWorker(1)
        cluster.crashCoordinator(restartAfter: 200_000)
        // Past the grace period (3 s here), with clients still sending.
        cluster.run(until: cluster.now + 6_000_000)
        let duringOutage = cluster.checker.answers.values.flatMap(\.outcomes).filter { $0.store == SimLedger.name && $0.status == .unknown }
        #expect(!duringOutage.isEmpty, "actions were dispatched while the ledger's workers were away")
        cluster.retired = []
        cluster.startWorker(0, withCheckpoint: true)
        cluster.startWorker(1, withCheckpoint: false)
        #expect(Self.settle(cluster, within: 60), "\(cluster.checker.recentSteps.suffix(10))")
        #expect(cluster.checker.violation == nil, "\(cluster.checker.violation ?? "")")
        #expect(cluster.checker.acknowledged.count == 60)
        #expect(Self.ledger(cluster, 0) == Self.ledger(cluster, 1), "both ledger replicas applied the same actions")
    }
}
