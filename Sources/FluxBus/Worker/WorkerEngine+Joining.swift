import Flux
import FluxBusProtocol
import Logging

/// Joining and catching up: HELLO, WELCOME, the FETCHes for what the worker lacks, and READY once it has it all.
/// The rules live in ``CoordinatorSession`` and ``CatchUp``; this carries out what they decide.
extension WorkerEngine {

    func sayHello() {
        session.saidHello(at: now)
        // The coordinator answers with the snapshots this worker needs, afresh.
        downloads.abandonAll()
        let declarations = stores.map { store in
            StoreDeclaration(
                name: store.name, dependsOn: store.dependencies, handlesAll: store.handlesAllActions,
                handles: store.actionNames, lastApplied: lastApplied)
        }
        send(.hello(.init(workerID: id, instance: instance, stores: declarations, applied: lastApplied, chain: chain ?? 0,
            appliedEpoch: appliedEpoch, crash: previousCrash)))
    }

    /// A REJECT: stop, unless it is a retryable one, `worker id busy` or `log unreadable` (HELLO again at the next
    /// retry), or a refusal of an id claim that reached this worker after it joined: ROUTER_HANDOVER routes replies
    /// for this id to whichever process connected with it last, so a refusal meant for another process claiming it
    /// can arrive here.
    func receive(_ reject: Message.Reject) {
        let isClaimRefusal = reject.code == .workerIDBusy || reject.code == .duplicateWorker
        if isClaimRefusal, phase == .catchingUp || phase == .live {
            return logger.warning("ignored a refusal meant for another process claiming this worker id", metadata: [
                "code": "\(reject.code)", "reason": "\(reject.reason)",
            ])
        }
        if reject.code == .workerIDBusy {
            return logger.warning("another process holds this worker id; saying HELLO again shortly", metadata: [
                "reason": "\(reject.reason)",
            ])
        }
        if reject.code == .logUnreadable {
            return logger.warning("the coordinator cannot check this worker's history yet; saying HELLO again shortly", metadata: [
                "reason": "\(reject.reason)",
            ])
        }
        emit(.rejected(code: reject.code, reason: reject.reason))
        logger.error("the coordinator refused this worker", metadata: ["code": "\(reject.code)", "reason": "\(reject.reason)"])
        stop(BusError(code: .refused, message: "the coordinator refused worker `\(id)`: \(reject.reason)"))
    }

    func welcomed(_ welcome: Message.Welcome) {
        // No check that `welcome.sequence >= lastApplied`: with a durable log the coordinator refuses a HELLO beyond
        // its history, and the dispatch in flight when it stopped comes again under the new epoch with the same
        // sequence, so a worker may legitimately be one (or more) ahead; it re-acknowledges what it applied.
        let restarted = session.welcomed(welcome)
        if restarted {
            logger.notice("coordinator restarted; rejoined under a new epoch", metadata: ["epoch": "\(welcome.epoch)"])
            // What was kept from the previous epoch may be what its log lost (a power cut while it synced): the new
            // epoch sends again what it still holds.
            earlyArrivals = EarlyArrivals()
        }
        catchUp.welcomed(at: welcome.sequence, restarted: restarted)
        logger[metadataKey: "epoch"] = "\(epoch)"
        installSnapshotsHeld(for: welcome.epoch)
        if session.subscribe(to: welcome.publishEndpoint) { pendingSubscription(welcome.publishEndpoint) }
        emit(.welcomed(epoch: epoch, sequence: welcome.sequence))
        logger.info("welcomed, catching up", metadata: ["seq": "\(lastApplied)", "target": "\(welcome.sequence)"])
        fetchWhatIsMissing()
    }

    /// Acknowledges again, with the state's digest now, each hosted store's latest result: what it did is what it
    /// reported (or replayed), and it has not run since, so the digest is the one after that sequence. The
    /// coordinator then compares it with the other replicas' at once, instead of at the next dispatch.
    func reportDigests() {
        var bySequence: [UInt64: [StoreResult]] = [:]
        for (store, lastRun) in zip(stores, lastRuns) {
            guard let run = lastRun else { continue }
            var result = run.result
            result.digest = digest(of: store)
            result.output = nil
            bySequence[run.sequence, default: []].append(result)
        }
        for (sequence, results) in bySequence.sorted(by: { $0.key < $1.key }) {
            send(.ack(.init(epoch: epoch, sequence: sequence, results: results)))
        }
    }

    /// Sends READY once caught up, with a working subscription and nothing in hand.
    func readyIfCaughtUp() {
        guard phase == .catchingUp, session.heardOnSubscriber, isIdle, downloads.isEmpty,
            catchUp.isCaughtUp(applied: lastApplied)
        else { return }
        session.wentLive()
        send(.ready(.init(epoch: epoch, lastApplied: lastApplied)))
        reportDigests()
        emit(.live(sequence: lastApplied))
        logger.info("live", metadata: ["seq": "\(lastApplied)"])
    }

    /// Fetches what the coordinator has that we lack, including a dispatch in hand it has moved past (to settle it
    /// from the record); then READY, if that was all.
    func fetchWhatIsMissing() {
        // A snapshot still arriving moves `lastApplied`: fetching from before it would ask for what the log dropped.
        guard downloads.isEmpty else { return }
        let inHand = current.map { (sequence: $0.sequence, begunAt: $0.begunAt) }
        if let range = catchUp.wanted(applied: lastApplied, inHand: inHand, now: now, patience: heartbeatInterval) {
            requestFetch(from: range.lowerBound, to: range.upperBound)
        }
        readyIfCaughtUp()
    }

    /// Sends a FETCH, unless one was sent too recently.
    func requestFetch(from: UInt64, to: UInt64) {
        guard catchUp.mayFetch(through: to, applied: lastApplied, at: now) else { return }
        send(.fetch(.init(epoch: epoch, from: from, to: to)))
    }

    /// Whether a message belongs to the epoch we joined. A newer epoch on the stream means the coordinator
    /// restarted: join it again.
    func isCurrentEpoch(_ messageEpoch: UInt64, fromSubscriber: Bool) -> Bool {
        switch session.check(messageEpoch, fromSubscriber: fromSubscriber) {
        case .current(let firstOnSubscriber):
            if firstOnSubscriber { readyIfCaughtUp() }
            return true
        case .newer:
            logger.notice("a new coordinator epoch appeared; joining again", metadata: ["new": "\(messageEpoch)"])
            sayHello()
            return false
        case .ignored:
            return false
        }
    }
}
