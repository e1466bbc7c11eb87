import FluxBusProtocol
import Logging

/// The durable log's part in the engine: group commits, waiting for the previous run's stores after a restart,
/// snapshots, and compaction.
extension CoordinatorEngine {

    /// Commits everything logged since the last flush, durably. A log that cannot be written stops the coordinator:
    /// it must not publish what it could not record.
    func flushLog() { commitLog(deferringSync: false) }

    /// Commits the actions about to be published, leaving the disk sync to the shell, which runs it (``syncLog()``)
    /// once those ACTIONs are on their way: nothing that tells of them goes out before it (``releaseAheadOfSync()``).
    func commitBeforePublishing() { commitLog(deferringSync: true) }

    private func commitLog(deferringSync: Bool) {
        guard !storageFailed else { return }
        // Timed only when a traced request's action or decision is in it.
        let timed = !tracesAwaitingCommit.isEmpty || (!flights.traces.isEmpty && !undeliveredDecisions.isEmpty)
        let began = timed ? clockNow() : now
        do {
            if deferringSync {
                syncOwed = try log.flushDeferringSync() || syncOwed
            } else {
                try log.flush()
                syncOwed = false
            }
            if timed {
                let commit = began...clockNow()
                for trace in tracesAwaitingCommit { trace.commit = commit }
                tracesAwaitingCommit.removeAll()
                lastTimedCommit = commit
            }
            unflushedResults.removeAll(keepingCapacity: true)
            if !syncOwed { releaseDecisions() }
        } catch {
            failStorage(error)
        }
    }

    /// Makes the last commit durable; then the decisions go out, once they are durable too. The shell calls it for
    /// `.syncLog`.
    func syncLog() {
        guard syncOwed, !storageFailed else { return }
        // Every traced request whose action this sync makes durable: committed, and not synced before.
        let traces = flights.traces.filter { $0.sync == nil && $0.commit != nil }
        let began = traces.isEmpty ? now : clockNow()
        do {
            try log.syncCommitted()
            if !traces.isEmpty {
                let sync = began...clockNow()
                for trace in traces { trace.sync = sync }
            }
            syncOwed = false
        } catch {
            return failStorage(error)
        }
        // A decision made after that commit (a store with no live replica, decided as its request started) is still
        // in the log's buffer: the sync did not make it durable. Commit it first. Released unlogged, a restart decided
        // the same store afresh, and a replica of its dependent that joined later replayed another outcome than the
        // one its peers had read (simulator seed 1302).
        if !undeliveredDecisions.isEmpty { flushLog() }
    }

    /// The tick's log sync in batch mode, and the WAL's periodic truncation. Once `try?`, which hid a batch-mode log
    /// that no longer synced: a failed sync stops the coordinator, and a failed truncation is reported every time.
    func syncIfBatched() {
        guard !storageFailed else { return }
        do {
            try log.syncIfBatched()
        } catch let failure as BusError {
            failStorage(failure)
        } catch {
            logger.error("the log's WAL could not be checkpointed; it grows until a checkpoint succeeds", metadata: [
                "error": "\(error)",
            ])
        }
    }

    private func failStorage(_ error: any Error) {
        let failure = error as? BusError ?? BusError(code: .storage, message: "cannot write the log: \(error)")
        logger.critical("the log cannot be written; stopping", metadata: ["error": "\(failure.message)"])
        stopOnStorageFailure(failure, because: "cannot write its log")
    }

    /// Stops the coordinator for its log: no more dispatching, every waiter answered, and the shell told to exit.
    /// - Parameter why: what happened, as the waiters' ERROR says it after "the coordinator".
    func stopOnStorageFailure(_ failure: BusError, because why: String) {
        guard !storageFailed else { return }
        storageFailed = true
        abandonOwedSync()
        answerWaitersBeforeStopping(failure, because: why)
        reportStorageFailure(failure)
    }

    /// Every requester still waiting: for the request in flight, and for those queued behind it.
    var waitingRequesters: [Requester] { flights.requesters + queue.waitingRequesters }

    /// Tells everyone waiting that the coordinator stops, before it does: nothing is dropped without an answer. The
    /// outcome is not known (an action in flight may have been applied, and one logged before will run again after
    /// a restart), so the answer says to retry under the same request id, which gets the true result.
    private func answerWaitersBeforeStopping(_ failure: BusError, because why: String) {
        #if DEBUG
        if plantedBug == .coordinatorStopsWithoutAnswering { return }
        #endif
        for requester in waitingRequesters {
            send(.error(.init(requestID: requester.requestID, code: .internal, message:
                "the coordinator \(why) (\(failure.message)) and is stopping. The outcome of request "
                + "`\(requester.requestID)` is not known: it may have been applied. Once the coordinator runs again, "
                + "send it again with the same request id to get its result; it is applied at most once")),
                to: requester.routingID)
        }
        for requester in stateQueries.closeAll() {
            send(.error(.init(requestID: requester.requestID, code: .internal, message:
                "the coordinator \(why) (\(failure.message)) and is stopping; ask again once it runs again")),
                to: requester.routingID)
        }
    }

    // MARK: - Restart

    /// The previous run's stores stay in the plans while their workers are away, as they do when a worker is lost
    /// without a restart: an action dispatched meanwhile records them `unknown`, and they apply it on their return.
    func rememberPreviousRun(_ declarations: [StoreDeclaration]) {
        let leftOut = membership.remember(declarations)
        guard !leftOut.isEmpty else { return }
        logger.warning("stores of the previous run left out of plans until a worker declares them again", metadata: [
            "stores": "\(leftOut.joined(separator: ","))", "why": "they conflict with the topology or with the stores here",
        ])
    }

    /// Ends the wait for the previous run's stores once each has a live replica again, or the grace period is over.
    func checkRecovery() {
        guard let (stores, until) = recovery else { return }
        let missing = stores.filter { membership.liveReplicas(of: $0).isEmpty }
        if missing.isEmpty || now >= until {
            recovery = nil
            if missing.isEmpty {
                logger.info("the previous run's stores are back; dispatching", metadata: ["queued": "\(queue.count)"])
            } else {
                logger.warning("dispatching without stores of the previous run that have not come back", metadata: [
                    "missing": "\(missing.sorted().joined(separator: ","))", "queued": "\(queue.count)",
                ])
            }
        } else {
            recovery = (missing, until)
        }
    }

    /// Holds a HELLO's history to the log. It conflicts when the worker applied more than the log holds, when its
    /// chain at its applied sequence differs from the log's, or when it applied that sequence in an epoch before the
    /// log's entry there was logged: the log lost or changed what the worker applied.
    func historyCheck(for hello: Message.Hello) -> HistoryCheck {
        let place = log.directory == nil ? " (its log is in memory, so a restart starts a new bus)"
            : " (its data directory was replaced, restored or damaged, or its machine lost power while the log synced; or "
                + "the worker's --data-dir checkpoint is from another bus, or was restored or edited)"
        if let store = hello.stores.first(where: { $0.lastApplied > lastLogged }) {
            return .conflict("store `\(store.name)` on worker `\(hello.workerID)` applied up to #\(store.lastApplied), but "
                + "this coordinator's log ends at #\(lastLogged)" + place)
        }
        guard hello.chain != 0 || hello.appliedEpoch != 0, hello.applied > 0, hello.applied >= log.oldestRetained,
            hello.applied <= lastLogged
        else { return .consistent }
        // Welcomed unchecked, a worker whose history the log lost would serve and acknowledge a state the bus does
        // not hold (found by the simulator: power cuts that lose commits, with reads that fail).
        let read = readLog(to: "check a joining worker's history", otherwise: "refusing it for now (REJECT 11)", [
            "worker": "\(hello.workerID)", "seq": "\(hello.applied)",
        ]) { try $0.loggedEntry(at: hello.applied) }
        let logged: LoggedEntry
        switch read {
        case .failure(let error):
            return .unreadable("the coordinator cannot read its log to check worker `\(hello.workerID)`'s history at "
                + "#\(hello.applied) (\(error)), so it does not welcome the worker yet; it checks again at the next HELLO")
        case .success(nil): return .consistent
        case .success(let entry?): logged = entry
        }
        if hello.chain != 0, logged.chain != hello.chain {
            return .conflict("worker `\(hello.workerID)` applied through #\(hello.applied) with chain \(StateDigest.hex(hello.chain)), "
                + "but this coordinator's log has chain \(StateDigest.hex(logged.chain)) at #\(hello.applied): its history differs"
                + place)
        }
        // The chain covers an action's fields, not its plan or its outcomes: a record lost and logged again with the
        // same fields matches it. Its epoch does not.
        if hello.appliedEpoch != 0, logged.epoch > hello.appliedEpoch {
            return .conflict("worker `\(hello.workerID)` applied #\(hello.applied) in epoch \(hello.appliedEpoch), but this "
                + "coordinator's log recorded its #\(hello.applied) in epoch \(logged.epoch), later: the log lost the entry the "
                + "worker applied and logged another there" + place)
        }
        return .consistent
    }

    /// A worker's history contradicts the log. A log in memory, or one started with `--new-bus`, refuses the worker
    /// (REJECT 9); a durable log stops the coordinator, which must not go on renumbering what workers applied.
    func refuseHistoryConflict(_ conflict: String, hello: Message.Hello, routingID: [UInt8]) {
        if log.directory == nil || configuration.newBus {
            return refuse(hello, code: .aheadOfLog, reason: conflict
                + ". Restart the worker with empty state (remove its --data-dir checkpoint) so it catches up from the log",
                to: routingID)
        }
        guard !storageFailed else { return }
        let failure = BusError(code: .storage, message: "the log \(log.path ?? "") is behind what a worker applied: \(conflict). "
            + LogContinuity.recovery)
        logger.critical("a worker applied what the log does not hold; stopping", metadata: [
            "worker": "\(hello.workerID)", "workerApplied": "\(hello.applied)", "workerChain": "\(StateDigest.hex(hello.chain))",
            "logEndsAt": "\(lastLogged)", "error": "\(failure.message)",
        ])
        stopOnStorageFailure(failure, because: "found its log behind what a worker applied")
    }

    /// Sends the snapshots a joining worker starts from, before its WELCOME: when it is fresh and snapshots exist,
    /// or when it is behind what the log still holds.
    func sendSnapshots(for hello: Message.Hello, to routingID: [UInt8]) {
        let applied = hello.stores.map(\.lastApplied).min() ?? 0
        let behind = applied + 1 < log.oldestRetained
        let fresh = applied == 0 && hello.stores.contains { log.snapshots[$0.name] != nil }
        guard behind || fresh else { return }
        for store in hello.stores {
            if let snapshot = log.snapshots[store.name], snapshot.sequence > store.lastApplied {
                sendSnapshot(snapshot, to: routingID)
            } else if store.lastApplied + 1 < log.oldestRetained {
                // Compaction waits for a snapshot of every store it knows, so a store without one took part in none of
                // the dropped dispatches: it starts empty where the log starts.
                send(.snapshot(.init(epoch: epoch, store: store.name, sequence: log.oldestRetained - 1, digest: 0, state: [])),
                     to: routingID)
            }
        }
        logger.info("sent snapshots to a joining worker", metadata: [
            "worker": "\(hello.workerID)", "lastApplied": "\(applied)", "logStartsAt": "\(log.oldestRetained)",
        ])
    }

    // MARK: - Snapshots and compaction

    /// Once the log holds a quarter more than it must retain, asks one live replica of every known store for its
    /// state; when they have answered (or the round times out), drops what every store's snapshot covers.
    func compactIfDue() {
        if snapshotRounds.isUnderWay {
            if snapshotRounds.endIfOver(at: now, receiving: !snapshotReceipts.isEmpty) {
                for abandoned in snapshotReceipts.abandonAll() {
                    logger.notice("a snapshot did not arrive whole before the round ended; the previous one stands", metadata: [
                        "store": "\(abandoned.store)", "seq": "\(abandoned.sequence)", "worker": "\(abandoned.worker)",
                    ])
                    log.abandonSnapshot(store: abandoned.store, sequence: abandoned.sequence)
                }
                compact()
            }
            return
        }
        guard recovery == nil, snapshotRounds.isDue(
            at: now, lastCompleted: lastCompleted, oldestRetained: log.oldestRetained,
            snapshotBytes: log.snapshots.values.reduce(0) { $0 + $1.size })
        else { return }
        let replicas = log.knownStores.compactMap { store in membership.liveReplicas(of: store).first.map { (store, $0) } }
        // The replicas encode whole states before they answer: the state timeout, not the ack timeout.
        for query in snapshotRounds.begin(asking: replicas, until: now.advanced(by: configuration.stateTimeout)) {
            send(.stateRequest(.init(requestID: query.queryID, store: query.store)), toWorker: query.worker)
        }
    }

    /// Drops what every store's snapshot covers, keeping the retained entries.
    private func compact() {
        let snapshotSequences = log.knownStores.map { log.snapshots[$0]?.sequence ?? 0 }
        guard let through = snapshotRounds.cutoff(lastCompleted: lastCompleted, snapshotSequences: snapshotSequences) else { return }
        guard through >= log.oldestRetained else {
            let missing = log.knownStores.filter { (log.snapshots[$0]?.sequence ?? 0) < log.oldestRetained }
            logger.notice("the log cannot be compacted yet: stores without a recent snapshot", metadata: [
                "stores": "\(missing.joined(separator: ","))",
                "why": "\(missing.map { "\($0): \(whyNoSnapshot(of: $0))" }.joined(separator: "; "))",
            ])
            return
        }
        log.compact(through: through, keepRequests: configuration.rememberedRequests)
        flushLog()
        logger.info("log compacted", metadata: ["through": "\(through)", "logStartsAt": "\(log.oldestRetained)"])
    }

    /// Why the last round brought no snapshot of `store`, in words an operator can act on.
    func whyNoSnapshot(of store: String) -> String {
        switch snapshotRounds.asks[store] {
        case nil:
            "no live replica to ask"
        case .unanswered(let worker):
            "asked `\(worker)`, whose state did not arrive before the round ended (--state-timeout for its first answer, "
                + "--ack-timeout between chunks); the next round asks again"
        case .answered(let worker):
            "`\(worker)` answered, but with no snapshot to keep (an error, a state not yet completed, or one cut off)"
        case .lost(let worker):
            "asked `\(worker)`, which was lost or left before it answered"
        }
    }
}
