import Flux
import FluxBusProtocol
import Logging

extension CoordinatorEngine {
    /// Starts queued dispatches while none is in flight. A dispatch that no live store takes part in completes at
    /// once, so this loops rather than recursing. Nothing starts before its action is committed to the log, nor
    /// while a restart still waits for the previous run's stores.
    func pump() {
        if log.hasUnflushedActions { flushLog() }
        guard !storageFailed, recovery == nil else { return }
        while inFlight == nil, let next = queue.pop() {
            start(next)
        }
    }

    private func start(_ queued: QueuedDispatch) {
        let request = queued.message
        let requesters = queued.requesters + (queuedRequestIDs.removeValue(forKey: request.requestID) ?? [])
        precondition(queued.sequence == lastSequence + 1, "the queue holds sequences in order")
        lastSequence = queued.sequence
        let graph = membership.graph
        let participating = graph.order.filter { membership.stores[$0]?.handles(request.actionType) == true }
        let taking = Set(participating)
        let plan = participating.map { PlanStep(store: $0, waitsFor: graph.dependencies(of: $0).filter(taking.contains)) }
        let action = Message.Action(
            epoch: epoch, sequence: lastSequence, actionType: request.actionType, payload: request.payload,
            error: request.error, plan: plan)
        let now = ContinuousClock.now
        var awaiting: [String: Set<String>] = [:]
        for step in plan { awaiting[step.store] = Set(membership.liveReplicas(of: step.store)) }
        inFlight = InFlightDispatch(
            action: action, requestID: request.requestID, requesters: requesters, startedAt: now,
            deadline: now.advanced(by: configuration.ackTimeout), awaiting: awaiting,
            nextResend: now.advanced(by: configuration.firstResend), resendGap: configuration.firstResend)
        publish(.action(action))
        logger.trace("dispatch started", metadata: ["seq": "\(lastSequence)", "action": "\(request.actionType)"])
        for step in plan where awaiting[step.store]!.isEmpty {
            settle(step.store)
        }
        completeIfDone()
    }

    func receiveAck(_ ack: Message.Ack, routingID: [UInt8]) {
        guard let workerID = workerID(for: routingID) else {
            return sendStrangerGoodbye("unknown worker: send HELLO first", to: routingID)
        }
        for result in ack.results {
            membership.recordDigest(result.digest, store: result.store, sequence: ack.sequence, worker: workerID)
        }
        guard ack.epoch == epoch, var flight = inFlight, ack.sequence == flight.sequence else {
            // A late or repeated acknowledgement, or one for a replayed dispatch: it only tells us progress.
            if ack.epoch == epoch, ack.sequence <= lastCompleted { membership.recordApplied(ack.sequence, by: workerID) }
            return
        }
        var settled: [String] = []
        for result in ack.results {
            guard flight.step(for: result.store) != nil, membership.workers[workerID]?.hosts(result.store) == true else {
                dropMalformed("ACK for store `\(result.store)`, which worker `\(workerID)` does not run in #\(ack.sequence)", from: routingID)
                continue
            }
            // Only a participant's first result counts: a worker that joined after the ACTION was published, or was
            // given up on, may still run the dispatch, but it is not waited for and its result is not recorded.
            guard flight.awaiting[result.store]?.remove(workerID) != nil else { continue }
            flight.results[result.store, default: []].append((workerID, result))
            if flight.awaiting[result.store]!.isEmpty, flight.settled[result.store] == nil {
                settled.append(result.store)
            }
        }
        if !flight.awaiting.values.contains(where: { $0.contains(workerID) }) {
            membership.recordApplied(flight.sequence, by: workerID)
        }
        inFlight = flight
        for store in settled { settle(store) }
        completeIfDone()
    }

    /// Records a store's outcome once all its replicas answered (or were lost), and hands it to the workers whose
    /// stores wait for it and do not host it themselves.
    func settle(_ store: String) {
        guard var flight = inFlight, flight.settled[store] == nil else { return }
        let lostReason = flight.lost[store]?.map(\.reason).joined(separator: "; ") ?? "no live replica"
        var output = InFlightDispatch.settle(store, results: flight.results[store] ?? [], lostReason: lostReason)
        if output.status == .lost, configuration.lostDependencyPolicy == .runWithoutOutput {
            // Its dependents run without its output. The record says so, so that a replay does the same.
            output = StoreOutput(store: store, status: .ok, message: "lost (\(lostReason)); released without output")
        }
        flight.settled[store] = output
        inFlight = flight

        // One RELEASE per worker, even when several of its stores wait for this one. A worker that hosts the store
        // itself resolves the dependency locally.
        let waiting = Set(flight.dependents(of: store).flatMap { membership.connectedReplicas(of: $0) })
        for worker in waiting.sorted() where membership.workers[worker]?.hosts(store) == false {
            send(.release(.init(epoch: epoch, sequence: flight.sequence, outputs: [output])), toWorker: worker)
        }
        completeIfDone()
    }

    func completeIfDone() {
        guard let flight = inFlight, flight.isComplete else { return }
        let elapsed = ContinuousClock.now - flight.startedAt
        var outcomes: [Outcome] = []
        for step in flight.plan {
            for (worker, result) in flight.results[step.store] ?? [] {
                outcomes.append(Outcome(store: step.store, worker: worker, status: result.status, message: result.message, digest: result.digest))
            }
            for (worker, reason) in flight.lost[step.store] ?? [] {
                outcomes.append(Outcome(store: step.store, worker: worker, status: .lost, message: reason, digest: 0))
            }
            if flight.results[step.store] == nil, flight.lost[step.store] == nil {
                outcomes.append(Outcome(store: step.store, worker: "", status: .lost, message: "no live replica", digest: 0))
            }
            checkDivergence(step.store, results: flight.results[step.store] ?? [], sequence: flight.sequence)
        }
        let entry = ReplayEntry(
            epoch: epoch, sequence: flight.sequence, actionType: flight.action.actionType, payload: flight.action.payload,
            error: flight.action.error, plan: flight.plan, outputs: flight.plan.map { flight.settled[$0.store]! })
        lastCompleted = flight.sequence
        inFlight = nil

        let micros = UInt64(max(0, elapsed.microseconds))
        // One result per request id: a retry that joined the dispatch gets the same one.
        var results: [String: Message.Result] = [:]
        for requester in flight.requesters {
            let result = results[requester.requestID] ?? Message.Result(
                requestID: requester.requestID, epoch: epoch, sequence: flight.sequence, elapsedMicros: micros, outcomes: outcomes)
            results[requester.requestID] = result
            send(.result(result), to: requester.routingID)
        }
        let completed = Message.Completed(
            epoch: epoch, sequence: flight.sequence, actionType: flight.action.actionType, elapsedMicros: micros,
            outcomes: outcomes)
        // A dispatch recovered from the log may have no requester left; its request id still gets its result.
        let requestID = flight.requestID
        if !requestID.isEmpty, results[requestID] == nil {
            results[requestID] = Message.Result(
                requestID: requestID, epoch: epoch, sequence: flight.sequence, elapsedMicros: micros, outcomes: outcomes)
        }
        log.complete(entry, completed: completed, results: Array(results.values))
        for (id, result) in results where !id.isEmpty { unflushedResults[id] = result }
        publish(.completed(completed))
        logger.debug("dispatch completed", metadata: [
            "seq": "\(flight.sequence)", "action": "\(flight.action.actionType)", "micros": "\(micros)",
        ])
    }

    /// Replicas that applied the same sequence must report the same digest; a difference is logged and shown.
    private func checkDivergence(_ store: String, results: [(worker: String, result: StoreResult)], sequence: UInt64) {
        let digests = Set(results.filter { $0.result.status != .lost }.map(\.result.digest))
        guard digests.count > 1 else { return }
        membership.markDiverged(store, at: sequence)
        logger.error("replicas diverged", metadata: [
            "store": "\(store)", "seq": "\(sequence)",
            "digests": "\(results.map { "\($0.worker)=\(StateDigestText.hex($0.result.digest))" }.joined(separator: ","))",
        ])
    }

    /// Re-sends the ACTION to silent replicas, with doubling gaps, and writes off those still silent at the
    /// deadline, so that one stuck worker never stalls the bus.
    func checkInFlight(now: ContinuousClock.Instant) {
        guard var flight = inFlight else { return }
        if now >= flight.deadline {
            for worker in flight.silentWorkers.sorted() {
                markLost(worker, reason: "missed the acknowledgement deadline for #\(flight.sequence)")
            }
            return
        }
        guard now >= flight.nextResend else { return }
        for worker in flight.silentWorkers.sorted() {
            guard let routingID = membership.workers[worker]?.routingID else { continue }
            resendInFlight(to: routingID)
        }
        flight.resendGap = min(flight.resendGap * 2, .seconds(1))
        flight.nextResend = now.advanced(by: flight.resendGap)
        inFlight = flight
    }

    /// Sends the ACTION in flight directly, with the releases already made that the receiver's stores wait for:
    /// it may have missed both.
    func resendInFlight(to routingID: [UInt8]) {
        guard let flight = inFlight else { return }
        send(.action(flight.action), to: routingID)
        guard let worker = workerByRoutingID[routingID].flatMap({ membership.workers[$0] }) else { return }
        let released = flight.plan.compactMap { step -> StoreOutput? in
            guard let output = flight.settled[step.store], !worker.hosts(step.store) else { return nil }
            let waitedFor = flight.dependents(of: step.store).contains(where: worker.hosts)
            return waitedFor ? output : nil
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

    // MARK: - Views

    func status(requestID: String) -> Message.Status {
        let now = ContinuousClock.now
        let workers = membership.workerOrder.compactMap { membership.workers[$0] }.map { worker in
            WorkerStatus(
                id: worker.id, state: worker.state, stores: worker.stores.map(\.name), lastApplied: worker.lastApplied,
                heartbeatAgeMillis: UInt32(clamping: (now - worker.lastHeard).milliseconds))
        }
        let stores = membership.storesInOrder.map { store in
            StoreStatus(
                name: store.declaration.name, dependsOn: store.declaration.dependsOn,
                handlesAll: store.declaration.handlesAll, handles: store.declaration.handles,
                waitingFor: membership.waitingFor(store.declaration.name), divergedAt: store.divergedAt,
                replicas: store.replicas.compactMap { membership.workers[$0] }.map { worker in
                    Replica(worker: worker.id, lastApplied: worker.digests[store.declaration.name]?.sequence ?? worker.lastApplied,
                            digest: worker.digests[store.declaration.name]?.digest ?? 0)
                },
                snapshotSequence: log.snapshots[store.declaration.name]?.sequence ?? 0)
        }
        return Message.Status(
            requestID: requestID, epoch: epoch, sequence: lastCompleted,
            queueLength: UInt32(clamping: queue.count + (inFlight == nil ? 0 : 1)),
            publishEndpoint: advertisedPublishEndpoint, workers: workers, stores: stores,
            logPath: log.path ?? "", logSync: log.directory == nil ? "memory" : log.sync.rawValue,
            logOldest: log.oldestRetained, logLast: lastLogged, retain: UInt64(configuration.retain))
    }

    func graph(requestID: String) -> Message.Graph {
        // Dependencies first, as GRAPH promises, whatever order the workers joined in. Stores still waiting for an
        // undeclared name are ordered by the names that are declared; join-time checks keep this graph acyclic.
        return Message.Graph(
            requestID: requestID,
            stores: membership.storesInOrder.map { store in
                GraphNode(
                    name: store.declaration.name, dependsOn: store.declaration.dependsOn,
                    handlesAll: store.declaration.handlesAll, handles: store.declaration.handles,
                    replicas: UInt16(clamping: membership.liveReplicas(of: store.declaration.name).count))
            })
    }
}

/// Digests as 16 hex digits, the way `status` and the logs show them.
package enum StateDigestText {
    package static func hex(_ digest: UInt64) -> String {
        let digits = String(digest, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
