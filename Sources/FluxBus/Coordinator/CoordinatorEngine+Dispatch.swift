import Flux
import FluxBusProtocol
import Logging

extension CoordinatorEngine {
    /// Whether no dispatch is in flight and at most one request waits to start: what a lock-step client leaves
    /// between its requests. The shell ends a burst early then (``CoordinatorShell/drainRouter()``).
    var isQuiet: Bool { flights.inFlightCount == 0 && queue.count <= 1 }

    /// Starts the requests waiting, in order, while ``FlightTable/admits(_:limit:)`` lets them in beside those
    /// in flight. A request that no live store takes part in completes at once, so this loops rather than recursing.
    /// Nothing starts before its actions are committed to the log, nor while a restart still waits for the previous
    /// run's stores. The ACTIONs go out while the disk syncs that commit; everything that tells of them (RESULT,
    /// COMPLETED, RELEASE) waits for the sync. A commit that no ACTION follows (accepted requests queued behind
    /// those in flight, decisions) is synced at once: a decision goes out only once it is on disk (docs/ARCHITECTURE.md,
    /// "Publishing while the log syncs", says why releasing it during the sync was tried and undone).
    func pump() {
        #if DEBUG
        let logFirst = plantedBug != .coordinatorPublishesBeforeLogging
        #else
        let logFirst = true
        #endif
        // The next request's plans go in the same commit as what was just accepted: they are fixed before its first
        // ACTION is published, so a restart dispatching it again names the same stores.
        let starting = nextMayStart
        let planned = starting ? planNext() : false
        if logFirst, planned || log.hasUnflushedActions || !undeliveredDecisions.isEmpty {
            if starting { commitBeforeStarting(planned: planned) } else { flushLog() }
        }
        guard !storageFailed, recovery == nil else { return }
        while nextMayStart {
            // After a request that started, the next one's plans need a commit of their own.
            if planNext() { commitBeforeStarting(planned: true) }
            guard !storageFailed, let next = queue.pop() else { return }
            start(next)
        }
        // Decisions made as the request started (a store with no live replica) go out now, not at the next tick;
        // with a sync owed they go out after it.
        if !undeliveredDecisions.isEmpty, !syncOwed { flushLog() }
    }

    /// Commits what the next request needs before its ACTIONs go out, its sync running while they travel; or, when
    /// the plans just logged would outlive its actions, syncs them first.
    private func commitBeforeStarting(planned: Bool) {
        if planned, plansOutliveActions { flushLog() } else { commitBeforePublishing() }
    }

    /// Whether the next request's plans, logged now, would reach the disk after its actions: its actions were
    /// committed in an earlier commit, and no sync already owed runs before its ACTIONs go out. Then the plans are
    /// synced before they are published, or a power cut could keep the actions and lose their plans after the
    /// workers applied them under those plans, and a restart plan them anew (simulator, power cuts that lose
    /// commits, seeds 254 and 283). Actions accepted in the same pass share their plans' commit, and are lost with it.
    private var plansOutliveActions: Bool {
        guard !syncOwed, let next = queue.nextSequence else { return false }
        return log.firstUnflushedAction.map { next < $0 } ?? true
    }

    /// Whether the next request waiting may start now.
    private var nextMayStart: Bool {
        guard recovery == nil, !storageFailed, let size = queue.nextSize else { return false }
        return flights.admits(size, limit: configuration.maxInFlight)
    }

    /// An action type's plan in one request: its steps, the replicas each step awaits, and the stores not ready.
    typealias PlannedType = (plan: [PlanStep], awaiting: [[String]], notReady: [Outcome])

    /// Publishes every action of the request, each with its plan. A batch's actions are all in flight at once:
    /// every worker still applies them one by one, in order, and a store still waits for its dependencies' outputs
    /// per action.
    private func start(_ queued: RequestQueue.Entry) {
        // A batch dispatched again after a restart answers for its actions that completed before it, too.
        flights.begin(CurrentRequest(
            requestID: queued.requestID, requesters: queued.requesters, isBatch: queued.isBatch,
            firstSequence: queued.batchFirst, count: queued.batchSize, fingerprint: queued.fingerprint,
            actionType: queued.actions.first?.actionType ?? "", startedAt: now,
            failures: queued.isBatch ? recordedFailures(queued.batchFirst..<queued.sequence) : [], trace: queued.trace))
        precondition(queued.sequence == lastSequence + 1, "the queue holds sequences in order")
        // One plan per action type, as logged, and the same live replicas for every action of the request.
        var plans: [String: PlannedType] = [:]
        // A batch's actions are nearly always of one type: its plan is found again by comparing bytes, not hashing.
        var lastPlanned: (type: String, planned: PlannedType)?
        let deadline = now.advanced(by: configuration.ackTimeout)
        let nextResend = now.advanced(by: configuration.firstResend)
        let traceparent = queued.trace?.context.description ?? ""
        let firstNew = flights.openIndices.upperBound
        var published = ActionRuns()
        for (offset, item) in queued.actions.enumerated() {
            let planned: PlannedType
            if let lastPlanned, lastPlanned.type.hasSameBytes(as: item.actionType) {
                planned = lastPlanned.planned
            } else {
                planned = plans[item.actionType] ?? {
                    let (plan, awaiting) = participants(in: queued.plans?[item.actionType] ?? plan(for: item.actionType))
                    let planned = (plan, awaiting, notReadyOutcomes(for: item.actionType, planned: plan))
                    plans[item.actionType] = planned
                    return planned
                }()
                lastPlanned = (item.actionType, planned)
            }
            let action = Message.Action(
                epoch: epoch, sequence: queued.sequence + UInt64(offset), actionType: item.actionType, payload: item.payload,
                error: item.error, plan: planned.plan, traceparent: traceparent)
            if let trace = queued.trace {
                trace.sequence = action.sequence
                trace.plan = action.plan
                trace.publishedAt = clockNow()
            }
            flights.append(InFlightDispatch(
                action: action, startedAt: now, deadline: deadline, awaiting: planned.awaiting, notReady: planned.notReady,
                nextResend: nextResend, resendGap: configuration.firstResend))
            lastSequence = action.sequence
            // A lock-step dispatch's one ACTION goes as it is: passing it through the runs copied it twice.
            if queued.actions.count == 1 { publish(.action(action)) } else { published.add(action) { publish($0) } }
        }
        published.finish { publish($0) }
        if syncOwed { releaseAheadOfSync() }
        logger.trace("dispatch started", metadata: ["seq": "\(queued.sequence)", "actions": "\(queued.actions.count)"])
        let started = firstNew..<flights.openIndices.upperBound
        // Outcomes decided before a restart stand: stores waiting for them may already have read them.
        for index in started where !recoveredDecisions.isEmpty {
            for output in recoveredDecisions.removeValue(forKey: flights[index].sequence) ?? []
            where flights[index].position(of: output.store) != nil {
                decide(output, at: index, recorded: true)
            }
        }
        for index in started {
            for (step, progress) in zip(flights[index].plan, flights[index].steps) where progress.awaiting.isEmpty {
                settle(step.store, at: index)
            }
        }
        completeIfDone()
    }

    func receiveAck(_ ack: Message.Ack, routingID: [UInt8]) {
        if ack.epoch == epoch, ack.sequence <= lastCompleted, let worker = workerByRoutingID[routingID] {
            learnLateOutcomes(ack, from: worker)
        }
        guard let workerID = workerID(for: routingID) else {
            return sendStrangerGoodbye("unknown worker: send HELLO first", to: routingID)
        }
        // By index, here and below: a for-in loop copied each result out, retaining and releasing its strings.
        for position in ack.results.indices {
            membership.recordDigest(
                ack.results[position].digest, store: ack.results[position].store, sequence: ack.sequence, worker: workerID)
            checkReportedDigest(ack.results[position], sequence: ack.sequence, worker: workerID)
        }
        guard ack.epoch == epoch, let index = flights.index(of: ack.sequence) else {
            // A late or repeated acknowledgement, or one for a replayed dispatch: it only tells us progress.
            if ack.epoch == epoch, ack.sequence <= lastCompleted { membership.recordApplied(ack.sequence, by: workerID) }
            return
        }
        if !ack.timings.isEmpty, let trace = flights.trace(of: ack.sequence) {
            trace.acks.append(.init(worker: workerID, arrivedAt: now, timings: ack.timings))
        }
        let flight = flights[index]
        let hosted = membership.workers[workerID]?.stores ?? []
        for result in ack.results.indices {
            let store = ack.results[result].store
            guard let position = flight.position(of: store), hosted.contains(where: { $0.name == store }) else {
                dropMalformed("ACK for store `\(store)`, which worker `\(workerID)` does not run in #\(ack.sequence)", from: routingID)
                continue
            }
            // Only a participant's first result counts: a worker that joined after the ACTION was published, or was
            // given up on, may still run the dispatch, but it is not waited for and its result is not recorded.
            _ = flight.record(ack.results[result], from: workerID, at: position)
        }
        if !flight.owesAcknowledgement(workerID) {
            membership.recordApplied(ack.sequence, by: workerID)
        }
        // Once every result is recorded, in the ACK's order (settling records decisions, and their order is the log's):
        // each of its stores that no replica owes a result any more and is not settled yet. Every other way a step
        // empties settles it at once, so these are the ones this ACK answered last; found from the dispatch rather
        // than listed as they are recorded, which cost an allocation per ACK.
        for result in ack.results.indices {
            let store = ack.results[result].store
            guard let position = flight.position(of: store), flight.steps[position].awaiting.isEmpty,
                flight.steps[position].settled == nil
            else { continue }
            settle(store, at: index)
        }
        completeIfDone()
    }

    /// Re-sends the oldest ACTION in flight to silent replicas (with the rest of the request, once), with doubling
    /// gaps, and writes off those still silent at its deadline, so that one stuck worker never stalls the bus.
    func checkInFlight() {
        guard let head = flights.head else { return }
        if now >= flights[head].deadline {
            // Only replicas that could have answered are written off; those still waiting for a dependency's RELEASE
            // get a new deadline, counted from now, once the outcomes of the ones written off are released. (A real
            // run lost a healthy dependent with its dead dependency when both deadlines fell on one tick.)
            // By sequence, not position: writing a worker off can complete and answer requests, and the positions of
            // the dispatches still in flight then move down.
            let (answerable, sequence) = (flights[head].silentWorkersNotWaitingForARelease, flights[head].sequence)
            for worker in answerable.sorted() {
                markLost(worker, reason: "missed the acknowledgement deadline for #\(sequence)")
            }
            if let still = flights.head, flights[still].sequence == sequence, !flights[still].silentWorkers.isEmpty {
                flights[still].deadline = now.advanced(by: configuration.ackTimeout)
            }
            completeIfDone()
            return
        }
        guard now >= flights[head].nextResend else { return }
        for worker in flights[head].silentWorkers.sorted() {
            guard let routingID = membership.workers[worker]?.routingID else { continue }
            for index in flights.indicesToResend(to: worker) { resendInFlight(index, to: routingID) }
            // The last sequence published: a worker that lost these re-sends too knows what to FETCH.
            send(.heartbeat(.init(epoch: epoch, sequence: lastSequence)), to: routingID)
        }
        flights[head].resendGap = min(flights[head].resendGap * 2, .seconds(1))
        flights[head].nextResend = now.advanced(by: flights[head].resendGap)
    }

    /// Sends an ACTION in flight directly, with the releases already made that the receiver's stores wait for:
    /// it may have missed both.
    func resendInFlight(_ index: Int, to routingID: [UInt8]) {
        let flight = flights[index]
        send(.action(flight.action), to: routingID)
        guard let worker = workerByRoutingID[routingID].flatMap({ membership.workers[$0] }) else { return }
        let released = zip(flight.plan, flight.steps).compactMap { step, progress -> StoreOutput? in
            guard progress.released, let output = progress.settled else { return nil }
            return flight.dependents(of: step.store).contains(where: worker.hosts) ? output : nil
        }
        if !released.isEmpty {
            send(.release(.init(epoch: epoch, sequence: flight.sequence, outputs: released)), to: routingID)
        }
    }

    /// The member behind a routing id, if it is live or catching up.
    func workerID(for routingID: [UInt8]) -> String? {
        guard let id = workerByRoutingID[routingID], let state = membership.workers[id]?.state,
            state == .live || state == .catchingUp
        else { return nil }
        return id
    }
}
