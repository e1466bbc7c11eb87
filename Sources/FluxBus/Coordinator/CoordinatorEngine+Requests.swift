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
        guard !isShuttingDown, !storageFailed else {
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
            if let result = completedResult(for: dispatch.requestID) {
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
        lastLogged += 1
        log.append(sequence: lastLogged, epoch: epoch, dispatch: dispatch, origin: origin(of: routingID))
        queue.push(QueuedDispatch(sequence: lastLogged, requesters: [requester], message: dispatch))
        if !dispatch.requestID.isEmpty { queuedRequestIDs[dispatch.requestID] = [] }
    }

    /// The result of a completed request, from memory if the log has not been flushed since, else from the log.
    func completedResult(for requestID: String) -> Message.Result? {
        if let result = unflushedResults[requestID] { return result }
        do {
            return try log.result(for: requestID)
        } catch {
            logger.error("cannot read a request's result from the log", metadata: ["request": "\(requestID)", "error": "\(error)"])
            return nil
        }
    }

    /// Who sent a dispatch, for the log: the worker's id for a cascade, else the client's routing id.
    private func origin(of routingID: [UInt8]) -> String {
        workerByRoutingID[routingID].map { "worker:\($0)" } ?? "client:\(Self.describe(routingID))"
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
            if fetch.from < log.oldestRetained {
                let reason = "sequence \(fetch.from) is older than the coordinator's log, which starts at \(log.oldestRetained); "
                    + "a replica that far behind starts from its stores' snapshots: let it join again (HELLO)"
                if workerByRoutingID[routingID] != nil {
                    // Compacted since it joined: joining again brings the snapshots it needs.
                    return send(.goodbye(.init(reason: reason)), to: routingID)
                }
                return send(.error(.init(requestID: "", code: .invalidRequest, message: reason)), to: routingID)
            }
            do {
                entries = try log.entries(in: fetch.from...min(fetch.to, lastCompleted), maximum: configuration.replayBatch)
            } catch {
                logger.error("cannot read the log to answer FETCH", metadata: ["from": "\(fetch.from)", "error": "\(error)"])
                return
            }
        }
        send(.replay(.init(epoch: epoch, entries: entries)), to: routingID)
        // The dispatch in flight is not history yet: send its ACTION again, directly.
        if let flight = inFlight, (fetch.from...fetch.to).contains(flight.sequence) {
            resendInFlight(to: routingID)
        }
    }
}
