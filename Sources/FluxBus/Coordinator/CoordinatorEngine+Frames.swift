import Flux
import FluxBusProtocol
import Logging

/// Input from the ROUTER: frames decoded, their sender checked, and each message handed to its rule.
extension CoordinatorEngine {
    /// Handles one message from the ROUTER. With CURVE, `userID` is the name the ZAP handler bound to the sender's
    /// key; a HELLO must declare exactly that name, from a key with the worker (or admin) role.
    func handle(_ frames: [[UInt8]], userID: String? = nil, peerAddress: String? = nil) {
        self.peerAddress = peerAddress
        guard frames.count >= 2 else { return dropMalformed("a message with no routing id", from: nil) }
        let routingID = frames[0]
        if policing.isQuarantined(routingID, at: now) { return }
        let messages: [Message]
        do {
            // A worker's ACKS stays whole: its thousand ACKs are walked in place, without a message and a list of
            // results apiece.
            messages = try codec.decodeAll(Array(frames.dropFirst()), keepingAcks: true)
        } catch {
            if let version = error.foundVersion, policing.answersVersionMismatch(from: routingID, at: now) {
                send(.reject(.init(code: .versionMismatch, reason:
                    "this coordinator speaks FluxBus protocol version \(Codec.version), not \(version); "
                    + "upgrade the peer or the coordinator so both speak the same version")), to: routingID)
            }
            answerIfOverLimit(error, frames: frames.dropFirst(), to: routingID)
            return dropMalformed(error.description, from: routingID)
        }
        let workerID = workerByRoutingID[routingID]
        // With CURVE, a connection speaks only for the name bound to its key. ROUTER_HANDOVER lets any connection
        // claim a worker's routing id, so a message arriving under a worker's routing id from another key must not
        // count as that worker's.
        if configuration.security != nil, let workerID, userID != workerID {
            return dropMalformed(
                "a message under worker `\(workerID)`'s routing id from "
                    + (userID.map { "the key named `\($0)`" } ?? "a connection without a key"), from: routingID)
        }
        // Another process's HELLO under a held id (one that shares the routing id, as a worker using its bare id
        // does) is not the holder speaking; nor, while such a claim is pending, is an answer to something sent to
        // the id, which the claimant may have got instead. Counting them would keep a crashed holder's registration
        // alive against its own restart.
        if let workerID, !messages.contains(where: { isClaim($0, on: workerID) }),
            !idClaims.isClaimed(workerID) || messages.contains(where: Self.isHoldersOwn)
        {
            membership.heard(from: workerID, at: now)
        }
        // By index: a for-in loop would copy each message out of the array, retaining and releasing all its fields.
        for index in messages.indices { handle(messages[index], routingID: routingID, userID: userID) }
    }

    /// Handles one decoded message (a BUNDLE's are handled one by one, in order).
    private func handle(_ message: Message, routingID: [UInt8], userID: String?) {
        switch message {
        case .hello(let hello):
            if let refusal = authorizationRefusal(for: hello, userID: userID) {
                return refuse(hello, code: .unauthorized, reason: refusal, to: routingID)
            }
            join(hello, routingID: routingID)
        case .ready(let ready): markReady(ready, routingID: routingID)
        case .ack(let ack): receiveAck(ack, routingID: routingID)
        case .acks(let run): run.forEachAck { receiveAck($0, routingID: routingID) }
        case .heartbeat(let heartbeat): receiveHeartbeat(heartbeat, routingID: routingID)
        case .goodbye(let goodbye): receiveGoodbye(goodbye, routingID: routingID)
        case .fetch(let fetch): serveFetch(fetch, routingID: routingID)
        case .dispatch(let dispatch):
            enqueue(requestID: dispatch.requestID, [BatchAction(actionType: dispatch.actionType, payload: dispatch.payload, error: dispatch.error)],
                    isBatch: false, routingID: routingID, traceparent: dispatch.traceparent)
        case .dispatchBatch(let batch): enqueue(requestID: batch.requestID, batch.actions, isBatch: true, routingID: routingID)
        case .statusRequest(let request): send(.status(status(requestID: request.requestID)), to: routingID)
        case .graphRequest(let request): send(.graph(graph(requestID: request.requestID)), to: routingID)
        case .stateRequest(let request): forwardStateRequest(request, routingID: routingID)
        case .state(let state) where snapshotRounds.awaits(state.requestID): receiveSnapshot(state, routingID: routingID)
        case .state(let state): forwardState(state, routingID: routingID)
        case .pull(let pull): servePull(pull, routingID: routingID)
        case .chunk(let chunk): receiveChunk(chunk, routingID: routingID)
        case .error(let error) where snapshotReceipts.receives(error.requestID, from: routingID):
            abandonReceipt(error)
        case .error(let error) where workerByRoutingID[routingID] != nil && snapshotRounds.awaits(error.requestID):
            _ = snapshotRounds.answer(error.requestID)
        case .error(let error) where workerByRoutingID[routingID] != nil && stateQueries.awaits(error.requestID):
            let requester = stateQueries.close(error.requestID)!
            send(.error(.init(requestID: requester.requestID, code: error.code, message: error.message)), to: requester.routingID)
        case .error(let error) where isLateAnswer(error.requestID, from: routingID):
            break
        case .bundle, .actions, .completions:
            // decodeAll refuses a BUNDLE inside a BUNDLE and hands these runs on as their messages: none reaches here.
            dropMalformed("\(message.command) not taken apart", from: routingID)
        case .welcome, .reject, .action, .release, .replay, .snapshot, .result, .error, .status, .graph, .completed, .batchResult:
            dropMalformed("\(message.command) is never sent to a coordinator", from: routingID)
        }
    }
}
