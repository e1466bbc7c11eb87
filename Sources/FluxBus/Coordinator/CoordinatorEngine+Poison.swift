import FluxBusProtocol
import Logging

/// Poison actions: a handler that kills its worker on one action kills it again on every restart, since the worker
/// replays that action. Workers report the crash in their next HELLO; at `poisonAfter` reports for the same store and
/// sequence, the action is marked poisoned for that store, and every replica skips the store there alike
/// (docs/OPERATIONS.md, "Poison actions").
extension CoordinatorEngine {
    /// Counts a HELLO's crash report, and marks the action poisoned once the reports reach the bound.
    func noteCrash(in hello: Message.Hello) {
        guard let crash = hello.crash, crash.sequence > 0,
            let tally = handlerCrashes.count(crash, worker: hello.workerID, instance: hello.instance)
        else { return }
        let bound = configuration.poisonAfter
        logger.error("a store's handler crashed its worker", metadata: [
            "worker": "\(hello.workerID)", "store": "\(crash.store)", "seq": "\(crash.sequence)", "signal": "\(crash.signal)",
            "crashes": "\(tally.count)", "poisonAfter": "\(bound)",
        ])
        guard bound > 0, tally.count >= bound else { return }
        poison(HandlerCrashes.Key(sequence: crash.sequence, store: crash.store), tally: tally)
    }

    private func poison(_ key: HandlerCrashes.Key, tally: HandlerCrashes.Tally) {
        let metadata: Logger.Metadata = ["store": "\(key.store)", "seq": "\(key.sequence)", "crashes": "\(tally.count)"]
        guard !log.poisonMarks.contains(where: { $0.sequence == key.sequence && $0.store == key.store }) else { return }
        guard key.sequence <= lastCompleted else {
            // Its outcome is not recorded yet: the first report after it completes marks it.
            return logger.warning("not marked poisoned yet: the action is still in flight", metadata: metadata)
        }
        // Its completion may still wait in the log's buffer.
        flushLog()
        guard key.sequence >= log.oldestRetained else {
            return logger.error("cannot mark the action poisoned: the log no longer holds it", metadata: metadata)
        }
        let read = readLog(to: "mark an action poisoned", otherwise: "it is not marked; its next crash report tries again", metadata) {
            try $0.entries(in: key.sequence...key.sequence, maximum: 1).first
        }
        guard case .success(let found) = read else { return }
        guard let entry = found else {
            return logger.error("cannot mark the action poisoned: the log no longer holds it", metadata: metadata)
        }
        let recorded = entry.outputs.first(where: { $0.store == key.store })
        // A store new to the bus replaying its history has no recorded outcome there, and no replica reported one.
        let replaying = recorded == nil && membership.stores[key.store].map {
            (log.histories[key.store] ?? .none).covers(entry, for: $0.declaration)
        } == true
        guard recorded != nil || replaying else {
            return logger.warning("ignored a crash report: the store was not planned for that action", metadata: metadata)
        }
        guard replaying || Self.noReplicaApplied(recorded!) else {
            // Another replica applied it: skipping it here would make this replica differ. The crash is this
            // worker's (its environment, its build), and stays loud until someone fixes it.
            var details = metadata
            details["recorded"] = "\(recorded!.status)"
            return logger.error("not marked poisoned: a replica of the store reported the action, so skipping it would make the crashing replica diverge; fix the handler or that worker", metadata: details)
        }
        if let ahead = stateBeyond(key) {
            // A replica reported it late, or a snapshot holds it: the recorded outcome says no more than unknown.
            var details = metadata
            details["appliedBy"] = "\(ahead)"
            return logger.error("not marked poisoned: a state of the store already includes the action, so skipping it would make the crashing replica diverge; fix the handler or that worker", metadata: details)
        }
        let mark = PoisonMark(
            sequence: key.sequence, store: key.store,
            reason: "poisoned: its handler crashed workers \(tally.summary); every replica skips it")
        log.recordPoison(mark)
        handlerCrashes.forget(key)
        for requestID in unknownOutcomes.resolveAll(sequence: key.sequence, store: key.store) {
            rewriteAnswer(requestID, sequence: key.sequence) { $0.poisoning(mark) }
        }
        // Before the WELCOME that follows: the worker's catch-up reads the mark.
        flushLog()
        logger.critical("action marked poisoned for a store: no replica of it runs the action from now on", metadata: metadata.merging([
            "reason": "\(mark.reason)", "see": "fluxbus tail --from \(key.sequence) --count 1",
        ]) { $1 })
    }

    /// Whether a recorded outcome came from no replica: unknown, or released without output under
    /// `--lost-dependency run`. Only then can no replica hold the action's effects.
    static func noReplicaApplied(_ recorded: StoreOutput) -> Bool {
        recorded.status == .unknown || (recorded.status == .ok && recorded.output == nil && recorded.message.hasPrefix("lost ("))
    }

    /// Who holds a state of the store that includes the action: a replica the coordinator knows (whatever its standing)
    /// that applied it, or the store's snapshot; nil when none does.
    private func stateBeyond(_ key: HandlerCrashes.Key) -> String? {
        for worker in membership.workers.values where worker.hosts(key.store) {
            if max(worker.lastApplied, worker.digests[key.store]?.sequence ?? 0) >= key.sequence { return "worker \(worker.id)" }
        }
        if let snapshot = log.snapshots[key.store], snapshot.sequence >= key.sequence { return "the snapshot at #\(snapshot.sequence)" }
        return nil
    }

    /// The poison marks of the entries `first…last`, for a REPLAY.
    func poisonMarks(from first: UInt64, through last: UInt64) -> [PoisonMark] {
        guard !log.poisonMarks.isEmpty, first <= last else { return [] }
        return log.poisonMarks.filter { (first...last).contains($0.sequence) }
    }

    /// STATUS's poison figures of a store.
    func poisonFigures(of store: String) -> StoreStatus.PoisonFigures {
        let marks = log.poisonMarks.filter { $0.store == store }
        let worst = handlerCrashes.worst(of: store)
        return .init(
            poisonedCount: UInt32(clamping: marks.count), lastPoisoned: marks.last?.sequence ?? 0,
            crashingAt: worst?.sequence ?? 0, crashCount: UInt32(clamping: worst?.count ?? 0))
    }
}

extension StoreStatus {
    struct PoisonFigures {
        let poisonedCount: UInt32
        let lastPoisoned: UInt64
        let crashingAt: UInt64
        let crashCount: UInt32
    }

    func withPoisonFigures(_ figures: PoisonFigures) -> StoreStatus {
        var status = self
        status.poisonedCount = figures.poisonedCount
        status.lastPoisoned = figures.lastPoisoned
        status.crashingAt = figures.crashingAt
        status.crashCount = figures.crashCount
        return status
    }
}

extension Message {
    /// The answer with the store's unknown outcomes for the mark's sequence made `poisoned`, with the mark's reason.
    func poisoning(_ mark: PoisonMark) -> Message {
        func poisoned(_ outcomes: [Outcome]) -> [Outcome] {
            outcomes.map { outcome in
                guard outcome.store == mark.store, outcome.status == .unknown else { return outcome }
                return Outcome(store: outcome.store, worker: outcome.worker, status: .poisoned, message: mark.reason, digest: 0)
            }
        }
        switch self {
        case .result(var result) where result.sequence == mark.sequence:
            result.outcomes = poisoned(result.outcomes)
            return .result(result)
        case .batchResult(var batch):
            batch.failures = batch.failures.map { failure in
                guard failure.sequence == mark.sequence else { return failure }
                return BatchFailure(sequence: failure.sequence, outcome: poisoned([failure.outcome])[0])
            }
            if mark.sequence == batch.firstSequence + UInt64(batch.count) - 1 { batch.outcomes = poisoned(batch.outcomes) }
            return .batchResult(batch)
        default:
            return self
        }
    }
}
