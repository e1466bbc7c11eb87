import Flux
import FluxBusProtocol
import Logging

/// What clients (and workers) ask for besides joining: dispatches, state, and history.
extension CoordinatorEngine {

    /// REPLAYs sent for one FETCH at most; a worker asks for at most 8,192 sequences at a time.
    static let replaysPerFetch = 16

    /// Accepts a DISPATCH (one action) or a DISPATCH_BATCH: checks it, answers a retry, and otherwise gives its actions
    /// their sequences and logs them before queueing.
    func enqueue(requestID: String, _ actions: [BatchAction], isBatch: Bool, routingID: [UInt8], traceparent: String = "") {
        let requester = Requester(routingID: routingID, requestID: requestID)
        func refuse(_ code: Message.Error.Code, _ message: String) {
            send(.error(.init(requestID: requestID, code: code, message: message)), to: routingID)
        }
        guard !isShuttingDown, !storageFailed else {
            return refuse(.shuttingDown, "the coordinator is shutting down; retry against its replacement")
        }
        // An empty id names no request: a retry under it could not be found, and would be applied again.
        guard !requestID.isEmpty else {
            return refuse(.invalidRequest, "the request id is empty; give every request a non-empty id, repeated on a retry")
        }
        guard !actions.isEmpty, actions.count <= configuration.maxBatch else {
            return refuse(.invalidRequest, "a batch holds 1 to \(configuration.maxBatch) actions (--max-batch), not \(actions.count); split it")
        }
        for (index, action) in actions.enumerated() {
            // Spelled only for a refusal: built for every action, it was two allocations per batched action.
            var which: String { isBatch ? "action \(index + 1) of the batch: " : "" }
            guard !action.actionType.isEmpty, action.actionType.utf8.count <= 256 else {
                return refuse(.invalidRequest, which + "the action type must be 1 to 256 bytes")
            }
            guard action.payload.count <= configuration.maxPayloadBytes else {
                return refuse(.invalidRequest, which + "the payload of \(action.payload.count) bytes is over this coordinator's limit of "
                    + "\(configuration.maxPayloadBytes) bytes (--max-payload-bytes); send less, or raise the limit")
            }
        }
        // A branch on an empty string is all an untraced request costs.
        var trace: RequestTrace?
        if !traceparent.isEmpty {
            do {
                trace = RequestTrace(context: try TraceContext(parsing: traceparent), receivedAt: now)
            } catch {
                return refuse(.invalidRequest, "the DISPATCH's traceparent: \(error)")
            }
        }
        #if DEBUG
        let looksUp = plantedBug != .coordinatorForgetsRequestIDs
        #else
        let looksUp = true
        #endif
        let fingerprint = RequestFingerprint.of(actions)
        var known: LoggedRequest?
        if looksUp {
            // A log that cannot say whether it holds the id must not let a retry pass for a new request: that would
            // apply it twice.
            let read = readLog(to: "check whether a request id was applied before", otherwise: "refusing the request", [
                "request": "\(requestID)",
            ]) { _ in try knownRequest(requestID) }
            guard case .success(let found) = read else {
                return refuse(.internal, "the coordinator cannot read its log to check whether request id `\(requestID)` was "
                    + "applied before, so nothing was dispatched; retry with the same id, and if this repeats, check the "
                    + "coordinator's log (its own log says why)")
            }
            known = found
        }
        if let known {
            // An idempotency key names one request: the same id with other actions is refused, not answered with
            // the first request's result.
            if let earlier = known.fingerprint, earlier != fingerprint {
                return refuse(.requestIDReused, "request id `\(requestID)` was already used for a request of "
                    + "`\(known.actionType ?? "?")` with other actions or payload; a request id names one request: send a new "
                    + "request under a new id (a retry must repeat the original exactly)")
            }
            if let answer = known.answer {
                return send(answer, to: routingID)
            }
            // A retry joins the request in hand, and every connection waiting gets the answer once. Past the limit a
            // waiter is refused at once rather than left without an answer.
            let maximum = configuration.maxWaitersPerRequest
            var admission = flights.addRequester(requester, maximum: maximum)
            if admission == .notWaiting { admission = queue.addRetry(requester, maximum: maximum) }
            switch admission {
            case .joined, .alreadyWaiting: return
            case .full:
                return refuse(.busy, "\(maximum) connections already wait for request id `\(requestID)` (--max-waiters-per-request); "
                    + "wait for the answer on one of them, or send it again once it has completed to get its recorded result")
            case .notWaiting: break
            }
        }
        if configuration.refuseUnhandled,
            let (index, action) = actions.enumerated().first(where: { plan(for: $0.element.actionType).isEmpty }) {
            return refuse(.unhandled, (isBatch ? "action \(index + 1) of the batch: " : "") + unhandledReason(for: action.actionType)
                + "; nothing was dispatched (this coordinator runs with --refuse-unhandled)")
        }
        // Larger than the whole queue, it would be "busy" however long the client waited.
        guard actions.count <= queue.limit else {
            return refuse(.invalidRequest, "a batch of \(actions.count) actions can never fit this coordinator's queue of "
                + "\(queue.limit) actions (--queue-limit); send batches of at most \(queue.limit) actions (--batch-size), or "
                + "raise --queue-limit")
        }
        guard queue.hasRoom(for: actions.count) else {
            return refuse(.busy, "the bus is busy: \(queue.actionCount) actions are queued (limit \(queue.limit)); retry later")
        }
        let first = lastLogged + 1
        let origin = origin(of: routingID)
        for action in actions {
            snapshotRounds.logged(payloadBytes: action.payload.count)
            lastLogged += 1
            log.append(
                sequence: lastLogged, epoch: epoch, action: action, origin: origin, requestID: requestID,
                batch: isBatch ? (first, actions.count) : nil, fingerprint: fingerprint)
        }
        queue.push(RequestQueue.Entry(
            sequence: first, requesters: [requester], requestID: requestID, actions: actions, isBatch: isBatch,
            batchFirst: first, batchSize: actions.count, plans: nil, fingerprint: fingerprint, trace: trace))
        if let trace { tracesAwaitingCommit.append(trace) }
    }

    /// What is known of a request id: in flight, queued, completed since the last flush, or in the log.
    /// - Throws: the log's read error: then the id may name a request the log holds.
    func knownRequest(_ requestID: String) throws -> LoggedRequest? {
        if let request = flights.request(requestID) {
            return LoggedRequest(fingerprint: request.fingerprint, actionType: request.actionType)
        }
        if let waiting = queue.waiting(requestID) { return waiting }
        if let result = unflushedResults[requestID] { return result }
        return try log.request(requestID)
    }

    /// Who sent a dispatch, for the log: the worker's id for a cascade, else the client's routing id.
    private func origin(of routingID: [UInt8]) -> String {
        workerByRoutingID[routingID].map { "worker:\($0)" } ?? "client:\(Self.describe(routingID))"
    }

    func forwardStateRequest(_ request: Message.StateRequest, routingID: [UInt8]) {
        guard membership.stores[request.store] != nil else {
            return send(.error(.init(requestID: request.requestID, code: .unknownStore,
                                     message: "no store named `\(request.store)` is on the bus; `fluxbus status` lists them")),
                        to: routingID)
        }
        guard let replica = membership.liveReplicas(of: request.store).first ?? membership.connectedReplicas(of: request.store).first
        else {
            return send(.error(.init(requestID: request.requestID, code: .noLiveReplica,
                                     message: "store `\(request.store)` has no live replica; start a worker that hosts it")),
                        to: routingID)
        }
        // The replica encodes the whole state before it answers: the first answer gets the state timeout, not the
        // ack timeout, and the client's own timeout stays its bound.
        let queryID = stateQueries.open(
            for: Requester(routingID: routingID, requestID: request.requestID), asking: replica,
            until: now.advanced(by: configuration.stateTimeout))
        send(.stateRequest(.init(requestID: queryID, store: request.store)), toWorker: replica)
    }

    func forwardState(_ state: Message.State, routingID: [UInt8]) {
        guard workerByRoutingID[routingID] != nil, stateQueries.awaits(state.requestID) else {
            if isLateAnswer(state.requestID, from: routingID) { return }
            return dropMalformed("STATE for no pending request", from: routingID)
        }
        // A state beyond the log holds an entry the log does not: one a power cut lost after the replica ran it (the
        // replica refuses to serve such a state itself; this is the coordinator's own check).
        guard state.sequence <= lastLogged else {
            let requester = stateQueries.close(state.requestID)!
            logger.warning("refused a replica's state beyond the log", metadata: [
                "store": "\(state.store)", "worker": "\(state.worker)", "seq": "\(state.sequence)", "logEndsAt": "\(lastLogged)",
            ])
            return send(.error(.init(requestID: requester.requestID, code: .busy, message:
                "worker `\(state.worker)` holds `\(state.store)` at #\(state.sequence), beyond this coordinator's log (#\(lastLogged)): "
                + "it ran an entry the log lost; ask again shortly")), to: requester.routingID)
        }
        // More bytes follow: relay the client's PULLs to the replica and its CHUNKs back (docs/PROTOCOL.md, "Transfers").
        let requester = UInt64(state.state.count) < state.size
            ? stateQueries.relay(state.requestID, from: routingID, size: state.size, until: now.advanced(by: configuration.ackTimeout))
            : stateQueries.close(state.requestID)
        guard let requester else { return dropMalformed("a second STATE for one request", from: routingID) }
        var reply = state
        reply.requestID = requester.requestID
        send(.state(reply), to: requester.routingID)
    }

    func serveFetch(_ request: Message.Fetch, routingID: [UInt8]) {
        var fetch = request
        fetch.from = max(fetch.from, 1)  // sequences start at 1
        guard fetch.from <= fetch.to else { return dropMalformed("FETCH with from > to", from: routingID) }
        guard fetch.epoch == 0 || fetch.epoch == epoch else {
            return sendStrangerGoodbye("epoch \(fetch.epoch) is over; this is epoch \(epoch): send HELLO to join", to: routingID)
        }
        if fetch.from <= lastCompleted, fetch.from < log.oldestRetained {
            let reason = "sequence \(fetch.from) is older than the coordinator's log, which starts at \(log.oldestRetained); "
                + "a replica that far behind starts from its stores' snapshots: let it join again (HELLO)"
            if workerByRoutingID[routingID] != nil {
                // Compacted since it joined: joining again brings the snapshots it needs.
                return send(.goodbye(.init(reason: reason)), to: routingID)
            }
            return send(.error(.init(requestID: "", code: .invalidRequest, message: reason)), to: routingID)
        }
        // For a worker, the whole completed part of the range, in REPLAYs of at most `replayBatch` entries and at most
        // `replaysPerFetch` of them; a client, which pairs each FETCH with one answer, gets one. Always at least one:
        // an empty REPLAY says nothing in the range has completed yet.
        let replays = workerByRoutingID[routingID] == nil ? 1 : Self.replaysPerFetch
        if fetch.from <= lastCompleted {
            // Completions wait in the log's buffer until the next commit; commit them so the read sees them.
            flushLog()
        }
        var from = fetch.from
        let through = min(fetch.to, lastCompleted)
        var replies: [Message.Replay] = []
        for _ in 0..<replays {
            var entries = EncodedEntries()
            if from <= through {
                let read = readLog(to: "answer FETCH", otherwise: "a worker asks again after its wait; a client is refused", [
                    "from": "\(from)",
                ]) { try $0.encodedEntries(in: from...through, maximum: configuration.replayBatch) }
                switch read {
                case .success(let found):
                    entries = found
                case .failure(let error):
                    // A client pairs its FETCH with one answer: it gets an ERROR rather than wait out its timeout.
                    guard workerByRoutingID[routingID] == nil else { return }
                    let why = (error as? BusError)?.message ?? "\(error)"
                    return send(.error(.init(requestID: "", code: .internal, message: "the coordinator cannot read its log "
                        + "from #\(from) (\(why)); ask again, and if this repeats, check the coordinator's log")), to: routingID)
                }
            }
            let marks = entries.count == 0 ? [] : poisonMarks(from: entries.firstSequence, through: entries.lastSequence)
            if entries.count > 0, !histories(from: entries.firstSequence, for: routingID).isEmpty {
                // A store's history adds steps to the plans: those entries are decoded, extended and encoded again.
                replies.append(.init(epoch: epoch, entries: withHistories(entries.decoded(), for: routingID), isLast: false, poisoned: marks))
            } else {
                replies.append(.init(epoch: epoch, encoded: entries, isLast: false, poisoned: marks))
            }
            guard entries.count > 0, entries.lastSequence < through else { break }
            from = entries.lastSequence + 1
        }
        // Dispatches in flight are not history yet: their ACTIONs go again, directly, after the history and before
        // the REPLAY that ends the answer, so that a worker reading that one has everything this FETCH brings.
        var inFlight: [Int] = []
        if let open = flights.openSequences, fetch.from <= open.upperBound, fetch.to >= open.lowerBound {
            inFlight = (max(fetch.from, open.lowerBound)...min(fetch.to, open.upperBound)).compactMap(flights.index(of:))
        }
        if inFlight.isEmpty { replies[replies.count - 1].isLast = true }
        for reply in replies { send(.replay(reply), to: routingID) }
        guard !inFlight.isEmpty else { return }
        for index in inFlight { resendInFlight(index, to: routingID) }
        send(.replay(.init(epoch: epoch, entries: [], isLast: true)), to: routingID)
    }
}
