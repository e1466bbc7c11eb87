@testable import FluxBus
import FluxBusProtocol

/// The log's sync on the simulated disk: the coordinator's `.syncLog`, the faults that strike while it hangs, the
/// check that nothing is told done before it, and the operator who recovers when a power cut lost a commit.
extension SimCluster {
    /// What befalls the coordinator while its log syncs.
    enum SyncFault: Sendable {
        /// The process dies: the commit is in the page cache, and survives.
        case crash
        /// The machine loses power: the commit being synced is lost, unless `keeping` (the disk had written it).
        case powerCut(keeping: Bool)
    }

    /// Runs the sync the coordinator owes, or starts a fault in the middle of it. False when what follows it must
    /// not go out: the sync failed, or the process is about to die in it.
    func performSync() -> Bool {
        guard let coordinator else { return false }
        if let fault = faultDuringSync?(self) ?? randomFaultDuringSync() {
            // The fsync hangs: the coordinator handles nothing, the ACTIONs ahead of it reach the workers, and the
            // fault strikes before it returns.
            stallCoordinator(for: 1_000_000)
            schedule(.duringSync(fault, incarnation: coordinatorIncarnation), after: Int64.random(in: 20_000...200_000, using: &random))
            return false
        }
        coordinator.syncLog()
        perform(coordinator.takeEffects())
        return self.coordinator === coordinator && !coordinator.storageFailed
    }

    /// The fault drawn at a sync strikes while it hangs.
    func strike(_ fault: SyncFault) {
        syncFaults += 1
        switch fault {
        case .crash: crashCoordinator()
        case .powerCut(let keeping): cutPower(keeping: keeping)
        }
    }

    /// The coordinator's machine loses power while its log syncs: the ACTIONs published ahead of the sync are on the
    /// network, and the commit being synced is lost, or kept when the disk happened to write it.
    func cutPower(keeping: Bool) {
        let lost = disk.powerCut(keeping: keeping)
        if lost {
            lostCommits += 1
            checker.lostPublished(after: disk.newestSequence ?? 0)
        }
        checker.note("fault: power cut during the log's sync; \(lost ? "the unsynced commit is lost" : "the disk had written it")")
        crashCoordinator()
    }

    /// The swarm's fault in the middle of a sync, when the plan has one: a crash, or a power cut the commit survived;
    /// when the plan says so, a power cut that loses it, for the scenario's operator to recover from.
    private func randomFaultDuringSync() -> SyncFault? {
        guard faultsOn, faults.crashDuringSync > 0, Double.random(in: 0..<1, using: &syncRandom) < faults.crashDuringSync else { return nil }
        if faults.powerCutsLoseCommits, Int.random(in: 0..<3, using: &syncRandom) == 0 { return .powerCut(keeping: false) }
        return Bool.random(using: &syncRandom) ? .crash : .powerCut(keeping: true)
    }

    /// The promise the sync order keeps: no client and no worker is told a dispatch completed before its action is
    /// on the disk for good.
    func checkDurable(_ message: Message) {
        switch message {
        case .bundle, .actions, .acks, .completions:
            for inner in checker.parts(of: message) { checkDurable(inner) }
            return
        default: break
        }
        // An ACTION whose action the disk holds for good has its plans there for good too: a power cut must not keep
        // the action and lose the plan it was published under (the lost-commit swarm, seeds 254 and 283).
        if case .action(let action) = message, disk.keepsForGood(action.sequence) == (true, false) {
            checker.fail("ACTION #\(action.sequence) went out before its plan was on the disk, its action already was")
        }
        // What a worker may apply, or take as where it stands, names an epoch the disk holds for good: a worker keeps
        // it as `appliedEpoch`, and a power cut that lost the epoch could let a later run reuse it (docs/PROTOCOL.md).
        let epoch: UInt64? = switch message {
        case .action(let action): action.epoch
        case .replay(let replay): replay.epoch
        case .snapshot(let snapshot): snapshot.epoch
        case .welcome(let welcome): welcome.epoch
        default: nil
        }
        if let epoch, !disk.syncedEpochs.contains(epoch) {
            checker.fail("\(SimChecker.brief(message)) went out in epoch \(epoch) before the log had that epoch on the disk")
        }
        // A dependency's outcome goes to its dependents only once the log holds it: a restart must release the same.
        if case .release(let release) = message {
            let logged = disk.decisions[release.sequence] ?? []
            for output in release.outputs where !logged.contains(where: { $0.store == output.store }) {
                checker.fail("RELEASE #\(release.sequence) told \(output.store) \(output.status) before the log held that decision")
            }
        }
        let told: UInt64? = switch message {
        case .result(let result): result.sequence
        case .batchResult(let result): result.firstSequence + UInt64(result.count) - 1
        case .completed(let completed): completed.sequence
        default: nil
        }
        if let told, told > disk.highestCommitted {
            checker.fail("#\(told) was told as done (\(SimChecker.brief(message))) before the log synced it (synced through "
                + "#\(disk.highestCommitted))")
        }
    }

    /// The coordinator stopped for its log. The scenario's operator, when it is a worker ahead of the log, starts it
    /// again once with `--new-bus`; when replicas read a decision the log lost, it restarts each one named empty.
    func operatorSees(_ error: BusError) {
        storageStops.append(error.message)
        if operatorRestartsMisreadReplicas, error.message.contains("reading outcomes of its dependencies") {
            for index in workers.indices where error.message.contains("on worker `\(workers[index].id)`") {
                crashWorker(index)
                restartEmpty(index, refused: error)
            }
            return
        }
        guard operatorRecoversFromAheadWorkers, error.message.contains("behind what a worker applied") else { return }
        checker.note("the operator starts the coordinator once with --new-bus")
        configuration.newBus = true
    }

    /// The operator restarts a worker that was refused for being ahead of the log, with empty state.
    func restartEmpty(_ index: Int, refused error: BusError?) {
        let id = workers[index].id
        checker.note("the operator restarts \(id), refused for \(error?.message ?? "?"), with empty state")
        workers[index].engine = nil
        workers[index].checkpoint = nil
        restartedEmptyByOperator += 1
        schedule(.workerRestart(index), after: 500_000)
    }
}
