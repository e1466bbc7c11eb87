import Flux
import FluxBusProtocol
import Logging

/// Starting stores from SNAPSHOTs. The coordinator sends one per hosted store before its WELCOME when the worker is
/// fresh or behind its retained log. A store brought to sequence `S` by a snapshot does not run `S` or earlier again:
/// while the worker's own `lastApplied` is below `S`, the store is treated like a remote one, and the outputs the
/// history recorded for it settle the stores that wait for it here.
extension WorkerEngine {

    /// A whole SNAPSHOT (inline, or reassembled from its chunks and checked against its checksum).
    func snapshotArrived(_ snapshot: Message.Snapshot) {
        guard phase == .joining || phase == .catchingUp else {
            return drop(snapshot, because: "this worker is not joining or catching up")
        }
        if phase == .joining {
            // Its WELCOME follows; install then, if the WELCOME is of the same epoch.
            snapshots.hold(snapshot)
            return
        }
        guard snapshot.epoch == epoch else { return drop(snapshot, because: "it is of epoch \(snapshot.epoch), not \(epoch)") }
        install(snapshot)
        adoptSnapshots()
        // It answers a FETCH, as a REPLAY would: ask for what follows at once.
        catchUp.answered()
        fetchWhatIsMissing()
    }

    /// Installs the snapshots that arrived before a WELCOME of `epoch`; drops those of another epoch.
    func installSnapshotsHeld(for epoch: UInt64) {
        for snapshot in snapshots.takeHeld() {
            if snapshot.epoch == epoch {
                install(snapshot)
            } else {
                drop(snapshot, because: "it is of epoch \(snapshot.epoch), but the WELCOME is of \(epoch)")
            }
        }
        adoptSnapshots()
    }

    /// Replaces a store's state with a snapshot's, and records that the store has applied through its sequence.
    func install(_ snapshot: Message.Snapshot) {
        guard let store = storesByName[snapshot.store] else { return }
        let applied = appliedSequence(of: store.name)
        guard snapshot.sequence > applied else {
            // Installing it would take the store back, and it would then apply some sequences twice.
            return logger.notice("ignored a snapshot this store is already past", metadata: [
                "store": "\(store.name)", "snapshot": "\(snapshot.sequence)", "applied": "\(applied)",
            ])
        }
        let previous = store.takeStateCopy()
        do {
            try store.restore(fromJSON: snapshot.state.isEmpty ? snapshots.initialState(of: store.name) : snapshot.state)
        } catch {
            store.restore(previous)
            return drop(snapshot, because: "its state does not decode: \(error)")
        }
        // Empty state means "the store did not exist yet": its digest is 0 by convention. Otherwise the restored
        // store must digest as the replica that gave the state said it did.
        if !snapshot.state.isEmpty, digest(of: store) != snapshot.digest {
            store.restore(previous)
            return drop(snapshot, because: "the restored state's digest is not the announced \(snapshot.digest)")
        }
        if snapshot.size == 0, applied == 0 {
            histories.startedEmpty(store.name, at: snapshot.sequence)
            logger.notice("store starts from an empty state: the coordinator's log no longer holds the actions before it", metadata: [
                "store": "\(store.name)", "seq": "\(snapshot.sequence)", "logStartsAt": "\(snapshot.sequence + 1)",
                "note": "a store new to the bus has no history before logStartsAt; fluxbus status shows where it starts",
            ])
        }
        // Its state is the snapshot's now, not what its latest run left.
        lastRuns[storesByName.index(of: store.name)!] = nil
        snapshots.mark(store.name, through: snapshot.sequence, chain: snapshot.chain)
        checkpointStale = true
        emit(.snapshotInstalled(store: store.name, sequence: snapshot.sequence))
        logger.info("installed a snapshot", metadata: [
            "store": "\(store.name)", "seq": "\(snapshot.sequence)", "bytes": "\(snapshot.state.count)",
        ])
        // The dispatch in hand, if the snapshot covers it: the store no longer runs there.
        if var dispatch = current, dispatch.sequence <= snapshot.sequence {
            dispatch.stopRunning(store.name)
            current = dispatch
            advance()
        }
    }

    /// The worker's applied sequence rises to the lowest its stores reached: a store without a snapshot counts as
    /// `lastApplied`. Catch-up then fetches from there.
    func adoptSnapshots() {
        let floor = snapshots.floor(of: stores, applied: lastApplied)
        if floor > lastApplied, current == nil {
            logger.info("snapshots moved the applied sequence", metadata: ["from": "\(lastApplied)", "to": "\(floor)"])
            lastApplied = floor
            // The history before `floor` came as state, not as entries: its chain is the one the snapshot at `floor`
            // gave (every store is at `floor` or past it, so one came from there), or unknown.
            chain = snapshots.chain(at: floor)
            appliedEpoch = epoch
        }
        forgetPassedSequences()
    }

    /// Drops what `lastApplied` has passed: snapshot marks, and actions and releases kept for later.
    func forgetPassedSequences() {
        snapshots.forget(through: lastApplied)
        earlyArrivals.forget(through: lastApplied)
    }

    /// Whether a hosted store runs dispatch `sequence` here. One a snapshot brought to `sequence` or later does not.
    func runsHere(_ store: String, _ sequence: UInt64) -> Bool {
        storesByName.hosts(store) && snapshots.runs(store, sequence)
            && (poisoned.isEmpty || !poisoned.contains(store, at: sequence))
    }

    /// The last sequence included in a hosted store's state: the dispatch in hand if the store already ran in it.
    func appliedSequence(of store: String) -> UInt64 {
        var applied = max(lastApplied, snapshots.appliedThrough(store) ?? 0)
        if let current, current.results.contains(where: { $0.store == store }) { applied = max(applied, current.sequence) }
        return applied
    }

    func drop(_ snapshot: Message.Snapshot, because reason: String) {
        malformedCount += 1
        logger.warning("dropped a SNAPSHOT", metadata: [
            "store": "\(snapshot.store)", "seq": "\(snapshot.sequence)", "reason": "\(reason)", "total": "\(malformedCount)",
        ])
    }
}
