import Flux
import FluxBusProtocol
import Logging

/// Catching up: the entries of a REPLAY run in order, as the coordinator recorded them, and nothing is acknowledged
/// unless the bus lacks a store's outcome.
extension WorkerEngine {
    func apply(_ replay: Message.Replay) {
        catchUp.answerArriving(at: now)
        if let range = catchUp.fetchAhead() {
            send(.fetch(.init(epoch: epoch, from: range.lowerBound, to: range.upperBound)))
            flushesEarly = true
        }
        for mark in poisoned.keep(replay.poisoned.filter { $0.sequence > lastApplied }, hosted: storesByName.hosts) {
            logger.warning("skipping a poisoned action: the coordinator marked it after handlers crashed on it", metadata: [
                "seq": "\(mark.sequence)", "store": "\(mark.store)", "reason": "\(mark.reason)",
            ])
            current?.stopRunning(mark.store, at: mark.sequence)
        }
        // The coordinator sends a REPLAY's entries in order: checked in one pass, they are neither copied nor sorted.
        // Read in place, field by field: a copy of an entry would retain each of its fields once more.
        let unsorted = replay.entries
        let inOrder = unsorted.indices.dropFirst().allSatisfy { unsorted[$0 - 1].sequence < unsorted[$0].sequence }
        let entries = inOrder ? unsorted : unsorted.sorted(by: { $0.sequence < $1.sequence })
        for index in entries.indices {
            // A graceful stop takes effect once the dispatch in hand has finished: no later entry runs.
            guard phase != .stopped else { return }
            let sequence = entries[index].sequence
            if current?.sequence == sequence,
                !holdsInHand(entries[index].actionType, entries[index].payload, entries[index].error, entries[index].plan) {
                replaceDispatchInHand(with: nil)
                if phase == .stopped { return }
            }
            let inHand = current?.sequence
            if inHand == sequence {
                // The dispatch in hand completed without us: settle what is pending from the recorded outcomes
                // (those of stores that run here are not taken: they settle by running).
                self.current!.isReplay = true
                self.current!.epoch = max(self.current!.epoch, replay.epoch)
                self.current!.learn(entries[index].outputs)
                advance()
                continue
            }
            guard inHand == nil, sequence == lastApplied + 1 else { continue }
            noteHistory(sequence: sequence, plan: entries[index].plan, outputs: entries[index].outputs)
            let prepared = plans.prepared(entries[index].plan, hosted: { self.runsHere($0, sequence) })
            // A store whose outcome the bus does not know reports its result (below): only a LocalDispatch does that.
            if let store = prepared.aloneHere,
                !entries[index].outputs.contains(where: { $0.status == .unknown && $0.store == store }) {
                replayAlone(
                    store, sequence: sequence, epoch: replay.epoch,
                    logged: BatchAction(actionType: entries[index].actionType, payload: entries[index].payload, error: entries[index].error))
                continue
            }
            var dispatch = LocalDispatch(
                sequence: sequence, epoch: replay.epoch, actionType: entries[index].actionType, payload: entries[index].payload,
                error: entries[index].error, traceparent: "", prepared: prepared, at: now)
            dispatch.isReplay = true
            // Recorded outcomes of the stores that do not run here: remote ones, and hosted ones a snapshot already
            // brought past this sequence. A store missing from the record counts as lost.
            dispatch.learn(entries[index].outputs)
            dispatch.settleTheRest(as: .lost("not in the recorded history"))
            current = consume dispatch
            advance()
        }
        drive()
        if replay.isLast { catchUp.answerEnded(applied: lastApplied, at: now) }
        fetchWhatIsMissing()
    }

    /// Runs a replayed entry whose plan has one store here, waiting for no planned store: the ``LocalDispatch`` a
    /// dispatch otherwise goes through would hand out that store at once and record the others' outcomes, which it
    /// never reads. Built, recorded and dropped per action, it was most of what a replica spent on catching up.
    func replayAlone(_ storeName: String, sequence: UInt64, epoch: UInt64, logged: BatchAction) {
        let position = storesByName.index(of: storeName)!
        let action = AnyAction(name: logged.actionType, json: logged.payload, error: logged.error.map(ActionError.init))
        let (status, message) = skipsWhatItReplaysAlone
            ? (OutcomeStatus.ok, "")
            : invoke(stores[position], at: position, action: action, sequence: sequence, isReplay: true, outputs: [:])
        noteRun(StoreResult(store: storeName, status: status, message: message, digest: 0), at: position, sequence: sequence,
                isReplay: true)
        moveOn(past: sequence, epoch: epoch, logged: logged)
    }

    /// The planted bug ``PlantedBug/workerSkipsWhatItReplaysAlone``; never in a release build.
    private var skipsWhatItReplaysAlone: Bool {
        #if DEBUG
        plantedBug == .workerSkipsWhatItReplaysAlone
        #else
        false
        #endif
    }
}
