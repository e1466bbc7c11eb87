import Flux
import FluxBusProtocol
import Logging

/// Running dispatches: in order, each store once its dependencies settled, live or from the coordinator's history,
/// and re-acknowledging duplicates from memory.
extension WorkerEngine {

    func receive(_ action: Message.Action) {
        catchUp.heard(of: action.sequence)
        #if DEBUG
        if plantedBug == .workerAcknowledgesBeforeApplying, action.sequence > lastApplied {
            let hosted = action.plan.filter { storesByName.hosts($0.store) }
            send(.ack(.init(epoch: epoch, sequence: action.sequence, results: hosted.map {
                StoreResult(store: $0.store, status: .ok, message: "", digest: 0)
            })))
        }
        if plantedBug == .workerReappliesDuplicates, current == nil, action.sequence <= lastApplied {
            begin(action)
            return drive()
        }
        if plantedBug == .workerSkipsGapCheck, current == nil, action.sequence > lastApplied + 1 {
            begin(action)
            return drive()
        }
        #endif
        if action.sequence <= lastApplied {
            return reacknowledge(action.sequence)
        }
        // Only its sequence is read: binding the dispatch in hand would copy it, each of its collections retained.
        if let inHand = current?.sequence {
            if inHand == action.sequence {
                guard holdsInHand(action.actionType, action.payload, action.error, action.plan) else {
                    return replaceDispatchInHand(with: action)
                }
                // A re-send: the coordinator is missing our acknowledgements for what already ran.
                let results = current!.results
                if !results.isEmpty { send(.ack(.init(epoch: epoch, sequence: action.sequence, results: results))) }
                // The same entry under a later epoch: what that epoch released for it while its ACTION travelled applies.
                guard action.epoch > current!.epoch else { return }
                current!.epoch = action.epoch
                guard let released = earlyArrivals.takeReleases(action.sequence) else { return }
                current!.learn(released)
                advance()
                return drive()
            }
            // A later dispatch arrived while this one still waits for a release: the next action of a batch, or the
            // coordinator completed this one without us (then catching up fetches its recorded outcomes).
            earlyArrivals.keep(action)
            return fetchWhatIsMissing()
        }
        if action.sequence == lastApplied + 1 {
            begin(action)
            drive()
        } else {
            earlyArrivals.keep(action)
            requestFetch(from: lastApplied + 1, to: action.sequence - 1)
        }
    }

    func receive(_ release: Message.Release) {
        // A RELEASE of a later epoch than the dispatch in hand is of the entry that epoch's log holds at this sequence,
        // which may be another (the log lost the one in hand): it waits for that epoch's ACTION to tell.
        if current?.sequence == release.sequence, release.epoch <= current!.epoch {
            current!.learn(release.outputs)
            advance()
            drive()
        } else if release.sequence > lastApplied {
            earlyArrivals.keep(release.outputs, for: release.sequence)
        }
    }

    func begin(_ action: Message.Action) {
        let prepared = plans.prepared(action.plan, hosted: { self.runsHere($0, action.sequence) })
        let released = earlyArrivals.takeReleases(action.sequence)
        // One store here, waiting for no planned store, untraced: nothing could hold it up or be released to it.
        if let store = prepared.aloneHere, action.traceparent.isEmpty { return runAlone(store, action) }
        var dispatch = LocalDispatch(
            sequence: action.sequence, epoch: action.epoch, actionType: action.actionType, payload: action.payload, error: action.error,
            traceparent: action.traceparent, prepared: prepared, at: now)
        if let released { dispatch.learn(released) }
        current = consume dispatch
        advance()
    }

    /// Runs a live ACTION whose plan has one store here, waiting for no planned store, as ``advance()`` and
    /// ``finish()`` would (the store runs at once, its ACK goes out, it is remembered, the worker moves past it), without
    /// the ``LocalDispatch`` they go through: built, recorded and dropped per action, it was half of what a worker spent
    /// on a batch's action.
    func runAlone(_ storeName: String, _ action: Message.Action) {
        let position = storesByName.index(of: storeName)!
        let store = stores[position]
        let logged = BatchAction(actionType: action.actionType, payload: action.payload, error: action.error)
        let (status, message) = skipsWhatItRunsAlone
            ? (OutcomeStatus.ok, "")
            : invoke(store, at: position, action: AnyAction(name: logged.actionType, json: logged.payload, error: logged.error.map(ActionError.init)),
                     sequence: action.sequence, isReplay: false, outputs: [:])
        let result = StoreResult(
            store: storeName, status: status, message: message, output: status == .ok ? try? store.output()?.encoded() : nil,
            digest: digest(of: store), readDigest: ReadDigest.none)
        noteRun(result, at: position, sequence: action.sequence, isReplay: false)
        send(.ack(.init(epoch: epoch, sequence: action.sequence, results: [result])))
        acknowledged.remember(action.sequence, [result])
        moveOn(past: action.sequence, epoch: action.epoch, logged: logged)
    }

    /// The planted bug ``PlantedBug/workerSkipsWhatItRunsAlone``; never in a release build.
    private var skipsWhatItRunsAlone: Bool {
        #if DEBUG
        plantedBug == .workerSkipsWhatItRunsAlone
        #else
        false
        #endif
    }

    /// Runs every hosted store whose dependencies have settled (or records it skipped, when one failed, was skipped or
    /// was lost), acknowledges the new results in one ACK, and finishes the dispatch when every hosted store has one.
    func advance() {
        // Taken out while it runs, and put back before anything reads it: a copy left in `current` would make each of
        // its collections copy itself on the first write.
        guard var dispatch = current.take() else { return }
        var fresh: [StoreResult] = []
        while let ready = dispatch.nextRunnable() {
            let position = storesByName.index(of: ready.store)!
            let store = stores[position]
            // A replayed result is only reported when the bus has no outcome for the store: it is digested then.
            let reported = !dispatch.isReplay || dispatch.unknownOnTheBus.contains(store.name)
            let result: StoreResult
            // A traced dispatch reads the clock around each store; an untraced one never does.
            let started = dispatch.timing == nil ? now : clockNow()
            if let blocker = ready.blockedBy {
                result = StoreResult(
                    store: store.name, status: .skipped, message: blocker, digest: reported ? digest(of: store) : 0,
                    readDigest: reported ? dispatch.readDigest(for: ready) : ReadDigest.none)
                dispatch.record(result)
            } else {
                result = run(store, at: position, in: &dispatch, step: ready, reported: reported)
            }
            if reported { fresh.append(result) }
            if reported, dispatch.timing != nil {
                dispatch.timing!.ran(store.name, ready: now, started: started, finished: clockNow())
            }
            noteRun(result, at: position, sequence: dispatch.sequence, isReplay: dispatch.isReplay)
        }
        let timings = fresh.isEmpty || dispatch.timing == nil ? [] : dispatch.timing!.takeUnsent(sentAt: clockNow())
        let sequence = dispatch.sequence, isFinished = dispatch.isFinished
        current = consume dispatch
        if !fresh.isEmpty { send(.ack(.init(epoch: epoch, sequence: sequence, results: fresh, timings: timings))) }
        if isFinished { finish() }
    }

    /// What a store's run leaves beside the dispatch, whichever way it ran: its last run, the `applied` event, the log.
    /// Inlined: called apart, passing the result cost a replayed action about 260 instructions (callgrind).
    @inline(__always)
    func noteRun(_ result: StoreResult, at position: Int, sequence: UInt64, isReplay: Bool) {
        lastRuns[position] = (sequence, result)
        if reportsApplied { emit(.applied(sequence: sequence, store: result.store, status: result.status)) }
        logger.debug("applied", metadata: [
            "seq": "\(sequence)", "store": "\(result.store)", "status": "\(result.status)", "replay": "\(isReplay)",
        ])
    }

    func run(
        _ store: AnyStore, at position: Int, in dispatch: inout LocalDispatch, step: LocalDispatch.Runnable, reported: Bool
    ) -> StoreResult {
        let (status, message) = invoke(
            store, at: position, action: dispatch.action, sequence: dispatch.sequence, isReplay: dispatch.isReplay,
            outputs: dispatch.outputs(for: step))
        // A replayed dispatch has completed: nobody reads its acknowledgement, so its output is not encoded nor its
        // state digested, which is most of what catching up would otherwise cost.
        let result = reported
            ? StoreResult(
                store: store.name, status: status, message: message,
                output: status == .ok ? try? store.output()?.encoded() : nil, digest: digest(of: store),
                readDigest: dispatch.readDigest(for: step))
            : StoreResult(store: store.name, status: status, message: message, digest: 0)
        dispatch.record(result)
        return result
    }

    /// Runs `store`'s handler for the action at `sequence`, reading `outputs` of the stores it waits for, and says how
    /// it ended.
    func invoke(
        _ store: AnyStore, at position: Int, action: AnyAction, sequence: UInt64, isReplay: Bool, outputs: [String: Value]
    ) -> (status: OutcomeStatus, message: String) {
        let origin = cascadeOrigin
        origin.begin(sequence: sequence, store: store.name)
        let context = DispatchContext(
            sequence: sequence, store: store.name, dependencies: store.dependencies, outputs: outputs, isReplay: isReplay,
            cascade: { [origin] action in try origin.cascade(action) })
        // Armed for the handler and what reads its state after it: a process killed in them leaves word of it.
        // Read once: each read of the engine's property is an access check and a retain.
        let marker = crashMarker
        marker?.arm(store: position, sequence: sequence)
        defer { marker?.disarm() }
        do {
            if store.isAsync(action.name), let awaitHandler {
                _ = try awaitHandler(store, action, context)
            } else {
                _ = try store.apply(action, context: context)
            }
            return (.ok, "")
        } catch {
            return (.failed, Self.truncated(ActionError(describing: error).message))
        }
    }

    /// Error messages travel in a protocol string, at most 4096 bytes; keep them well inside that.
    static func truncated(_ message: String, limit: Int = 1024) -> String {
        guard message.utf8.count > limit else { return message }
        var cut = message.utf8.prefix(limit)
        while String(cut) == nil { cut = cut.dropLast() }
        return String(cut)! + "…"
    }

    /// The digest of a store's state (PROTOCOL.md, Appendix A): kept up to date by the state itself where it can
    /// (a ``DigestedState``, as `kv` and `counter` do), otherwise FNV-1a 64 of the whole canonical state.
    func digest(of store: AnyStore) -> UInt64 {
        store.maintainedDigest() ?? (try? store.encodedState()).map(StateDigest.fnv1a64) ?? 0
    }

    func finish() {
        // Moved out, not copied: a copy would retain every one of its collections, only to drop it below.
        guard let dispatch = current.take() else { return }
        // A replayed dispatch completed before we ran it: the coordinator never asks for its acknowledgement again.
        if !dispatch.isReplay { acknowledged.remember(dispatch.sequence, dispatch.results) }
        moveOn(past: dispatch.sequence, epoch: dispatch.epoch, logged: dispatch.logged)
    }

    /// Every store here has run the entry at `sequence` (or settled without running): the worker moves past it.
    func moveOn(past sequence: UInt64, epoch: UInt64, logged: BatchAction) {
        chain = sequence == lastApplied + 1 ? chain.map { LogChain.next(after: $0, sequence: sequence, action: logged) } : nil
        lastApplied = sequence
        appliedEpoch = epoch
        checkpointStale = true
        // One step forward: only what was kept for this sequence can have become stale. (A snapshot's jump sweeps
        // everything, in `adoptSnapshots`.)
        earlyArrivals.forget(lastApplied)
        snapshots.forget(through: lastApplied)
        poisoned.forget(through: lastApplied)
        if stopping { return sayGoodbye() }
        readyIfCaughtUp()
    }

    /// Starts buffered dispatches that are next in line.
    func drive() {
        while isIdle, phase != .stopped, let next = earlyArrivals.takeAction(lastApplied + 1) {
            begin(next)
        }
    }

    /// Whether the dispatch in hand is of this action. The coordinator's action at the sequence in hand is another
    /// only when its log lost the one this worker began (a power cut while it synced), and a restart gave the
    /// sequence to another action.
    func holdsInHand(_ actionType: String, _ payload: [UInt8], _ error: String?, _ plan: [PlanStep]) -> Bool {
        let logged = current!.logged
        return logged.actionType == actionType && logged.error == error && logged.payload == payload && current!.plan == plan
    }

    /// The dispatch in hand is of an action the coordinator's log no longer holds. If no store here has run it, it is
    /// dropped, and `action` (when given) begun instead. If one has, this worker holds state the bus does not: it
    /// stops, to resume from its checkpoint (written before that dispatch) or to start empty, and catch up.
    func replaceDispatchInHand(with action: Message.Action?) {
        let dropped = current!
        guard dropped.results.isEmpty else {
            logger.critical("the coordinator's log lost an action this worker ran; stopping", metadata: [
                "seq": "\(dropped.sequence)", "action": "\(dropped.action.name)",
            ])
            return stop(BusError(code: .refused, message: "worker `\(id)` ran #\(dropped.sequence) "
                + "(`\(dropped.action.name)`) in part, but the coordinator now has another action as #\(dropped.sequence): its "
                + "log lost the one this worker ran (its machine lost power while the log synced). The worker stops rather "
                + "than go on from a state the log does not hold; restarted, it resumes from its checkpoint (written "
                + "before #\(dropped.sequence)) or starts empty, and catches up"))
        }
        logger.warning("dropped a dispatch in hand that the coordinator's log lost; running its action instead", metadata: [
            "seq": "\(dropped.sequence)", "dropped": "\(dropped.action.name)",
        ])
        current = nil
        guard let action else { return }
        begin(action)
        drive()
    }

    func reacknowledge(_ sequence: UInt64) {
        guard let results = acknowledged.results(for: sequence) else { return }
        send(.ack(.init(epoch: epoch, sequence: sequence, results: results)))
    }

    func cascade(_ action: AnyAction, requestID: String) throws {
        send(.dispatch(.init(
            requestID: requestID, actionType: action.name, payload: try action.encodedPayload(),
            error: action.error?.message)))
    }
}
