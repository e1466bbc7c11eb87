import Flux
import FluxBusProtocol
import Logging

/// What clients (and workers) ask for besides joining: dispatches, state, and history.
extension CoordinatorEngine {

    func enqueue(_ dispatch: Message.Dispatch, routingID: [UInt8]) {
        let requester = Requester(routingID: routingID, requestID: dispatch.requestID)
        func refuse(_ code: Message.Error.Code, _ message: String) {
            send(.error(.init(requestID: dispatch.requestID, code: code, message: message)), to: routingID)
        }
        guard !isShuttingDown else {
            return refuse(.shuttingDown, "the coordinator is shutting down; retry against its replacement")
        }
        guard !dispatch.actionType.isEmpty, dispatch.actionType.utf8.count <= 256 else {
            return refuse(.invalidRequest, "the action type must be 1 to 256 bytes")
        }
        guard dispatch.payload.count <= configuration.maxPayloadBytes else {
            return refuse(.invalidRequest, "the payload of \(dispatch.payload.count) bytes is over this coordinator's limit of "
                + "\(configuration.maxPayloadBytes) bytes (--max-payload-bytes); send less, or raise the limit")
        }
        if !dispatch.requestID.isEmpty {
            if let result = recentResults[dispatch.requestID] {
                return send(.result(result), to: routingID)
            }
            // A retry joins the request in hand; a few retries are answered each, more add nothing.
            if inFlight?.requesters.contains(where: { $0.requestID == dispatch.requestID }) == true {
                if inFlight!.requesters.count < Self.requestersPerRequest { inFlight!.requesters.append(requester) }
                return
            }
            if let waiting = queuedRequestIDs[dispatch.requestID] {
                if waiting.count < Self.requestersPerRequest { queuedRequestIDs[dispatch.requestID]!.append(requester) }
                return
            }
        }
        guard queue.count < configuration.queueLimit else {
            return refuse(.busy, "the bus is busy: \(queue.count) dispatches are queued (limit \(configuration.queueLimit)); retry later")
        }
        queue.push(QueuedDispatch(requesters: [requester], message: dispatch))
        if !dispatch.requestID.isEmpty { queuedRequestIDs[dispatch.requestID] = [] }
    }

    func remember(_ result: Message.Result) {
        guard !result.requestID.isEmpty else { return }
        recentResults[result.requestID] = result
        recentResultOrder.push(result.requestID)
        while recentResultOrder.count > configuration.rememberedRequests, let old = recentResultOrder.pop() {
            recentResults[old] = nil
        }
    }

    func forwardStateRequest(_ request: Message.StateRequest, routingID: [UInt8], now: ContinuousClock.Instant) {
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
        nextQueryNumber += 1
        let queryID = "q\(nextQueryNumber)"
        stateQueries[queryID] = StateQuery(
            requester: Requester(routingID: routingID, requestID: request.requestID),
            deadline: now.advanced(by: configuration.ackTimeout))
        send(.stateRequest(.init(requestID: queryID, store: request.store)), toWorker: replica)
    }

    func forwardState(_ state: Message.State, routingID: [UInt8]) {
        guard workerByRoutingID[routingID] != nil, let query = stateQueries.removeValue(forKey: state.requestID) else {
            return dropMalformed("STATE for no pending request", from: routingID)
        }
        var reply = state
        reply.requestID = query.requester.requestID
        send(.state(reply), to: query.requester.routingID)
    }

    func serveFetch(_ request: Message.Fetch, routingID: [UInt8]) {
        var fetch = request
        fetch.from = max(fetch.from, 1)  // sequences start at 1
        guard fetch.from <= fetch.to else { return dropMalformed("FETCH with from > to", from: routingID) }
        guard fetch.epoch == 0 || fetch.epoch == epoch else {
            return sendStrangerGoodbye("epoch \(fetch.epoch) is over; this is epoch \(epoch): send HELLO to join", to: routingID)
        }
        // Always answered: an empty REPLAY says nothing in the range has completed yet.
        var entries: [ReplayEntry] = []
        if fetch.from <= lastCompleted {
            if let oldest = history.oldestSequence, fetch.from < oldest {
                let reason = "sequence \(fetch.from) is older than the coordinator's history, which starts at \(oldest); "
                    + "this replica cannot catch up by replay: start it with empty state under a new worker id"
                if workerByRoutingID[routingID] != nil {
                    return send(.reject(.init(code: .behindWindow, reason: reason)), to: routingID)
                }
                return send(.error(.init(requestID: "", code: .invalidRequest, message: reason)), to: routingID)
            }
            entries = Array(history.entries(in: fetch.from...min(fetch.to, lastCompleted), maximum: configuration.replayBatch))
        }
        send(.replay(.init(epoch: epoch, entries: entries)), to: routingID)
        // The dispatch in flight is not history yet: send its ACTION again, directly.
        if let flight = inFlight, (fetch.from...fetch.to).contains(flight.sequence) {
            resendInFlight(to: routingID)
        }
    }
}
