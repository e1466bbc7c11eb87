import Flux
import FluxBusProtocol
import Logging

/// Joining and leaving: HELLO checks, READY, heartbeats, goodbyes, and writing off lost workers.
extension CoordinatorEngine {
    /// Why a HELLO is not allowed from the key it came with, or nil when it is (or CURVE is off).
    func authorizationRefusal(for hello: Message.Hello, userID: String?) -> String? {
        guard let keys = configuration.security?.authorizedKeys else { return nil }
        guard let userID, let entry = keys.entry(named: userID) else {
            return "this connection has no authorized key"
        }
        guard entry.role == .worker || entry.role == .admin else {
            return "the key named `\(entry.name)` has the \(entry.role.rawValue) role, which may not join as a worker"
        }
        guard hello.workerID == entry.name else {
            return "worker id `\(hello.workerID)` is not the name its key is bound to (`\(entry.name)`); "
                + "a worker must use the id listed with its key in the authorized keys"
        }
        return nil
    }


    func join(_ hello: Message.Hello, routingID: [UInt8]) {
        guard WorkerRoutingID.belongs(routingID, to: hello.workerID) else {
            return refuse(hello, code: .invalidDeclaration, reason:
                "worker id `\(hello.workerID)` differs from the connection's routing id `\(Self.describe(routingID))`; "
                + "set ZMQ_ROUTING_ID to the worker id, or to the worker id, `/` and the instance in hex, before "
                + "connecting", to: routingID)
        }
        if let holder = membership.workers[hello.workerID], holder.instance != hello.instance,
            holder.state == .live || holder.state == .catchingUp
        {
            return refuseClaim(hello, holder: holder, routingID: routingID)
        }
        guard hello.stores.count <= configuration.maxStoresPerWorker else {
            return refuse(hello, code: .tooMany, reason:
                "worker `\(hello.workerID)` declares \(hello.stores.count) stores; this coordinator accepts at most "
                + "\(configuration.maxStoresPerWorker) per worker", to: routingID)
        }
        // The log answers only for what it committed: an action logged in this burst, perhaps at the very sequence the
        // worker applied something else under (a restart that lost a commit), is committed first, as FETCH does.
        if log.hasUnflushedActions, hello.applied > 0 { flushLog() }
        switch historyCheck(for: hello) {
        case .consistent: break
        case .conflict(let conflict): return refuseHistoryConflict(conflict, hello: hello, routingID: routingID)
        case .unreadable(let reason): return refuse(hello, code: .logUnreadable, reason: reason, to: routingID)
        }
        guard membership.workers[hello.workerID] != nil || membership.workers.count < configuration.maxWorkers else {
            return refuse(hello, code: .tooMany, reason:
                "this coordinator already has \(membership.workers.count) workers, its limit", to: routingID)
        }
        // The same process saying HELLO again, while it is live or joining, has not lost its place: it heard nothing
        // for a while (this coordinator stalled, or a restart's HELLOs queued up), or it needs snapshots (the log was
        // compacted past it: then a live one catches up again first). It gets them and its WELCOME again, and keeps
        // its standing, so neither the dispatches in flight nor its stores lose it.
        let behindTheLog = (hello.stores.map(\.lastApplied).min() ?? 0) + 1 < log.oldestRetained
        if let current = membership.workers[hello.workerID], current.instance == hello.instance,
            current.routingID == routingID, current.state == .catchingUp || (current.state == .live && !behindTheLog)
        {
            sendSnapshots(for: hello, to: routingID)
            return send(welcome, to: routingID)
        }
        do {
            // A new instance under a known id whose registration lapsed is a restarted worker: it takes over.
            if let previous = membership.workers[hello.workerID], previous.routingID != routingID {
                workerByRoutingID[previous.routingID] = nil
            }
            if let previous = membership.workers[hello.workerID], previous.state == .live || previous.state == .catchingUp {
                markLost(hello.workerID, reason: "rejoined (instance \(hello.instance))")
            }
            try membership.join(hello, routingID: routingID, now: now)
        } catch {
            return refuse(hello, code: error.code, reason: error.reason, to: routingID)
        }
        workerByRoutingID[routingID] = hello.workerID
        idClaims.accepted(hello.workerID, address: peerAddress)
        // Before its WELCOME: a mark this report completes goes out with the catch-up it is about to FETCH.
        noteCrash(in: hello)
        rememberStores(of: hello)
        logger.info(
            "worker joined, catching up",
            metadata: [
                "worker": "\(hello.workerID)", "stores": "\(hello.stores.map(\.name).joined(separator: ","))",
                "lastApplied": "\(membership.workers[hello.workerID]!.lastApplied)",
            ])
        for name in hello.stores.map(\.name) where !membership.graph.contains(name) {
            logger.info("store waiting for its dependencies", metadata: [
                "store": "\(name)", "waitingFor": "\(membership.waitingFor(name).joined(separator: ","))",
            ])
        }
        sendSnapshots(for: hello, to: routingID)
        send(welcome, to: routingID)
    }

    /// Whether a message is a HELLO from another instance than the one registered under `workerID`.
    func isClaim(_ message: Message, on workerID: String) -> Bool {
        guard case .hello(let hello) = message, let holder = membership.workers[workerID] else { return false }
        return hello.instance != holder.instance
    }

    /// Whether a message is one only a joined worker sends of its own accord, never a joining one, nor in answer.
    static func isHoldersOwn(_ message: Message) -> Bool {
        switch message {
        case .heartbeat, .ack, .acks, .ready, .fetch: true
        default: false
        }
    }

    /// Refuses a HELLO for an id a live or joining registration holds: retryably while the holder may have crashed
    /// (its registration lapses after a deadline of silence), finally once it has been heard past that.
    private func refuseClaim(_ hello: Message.Hello, holder: Membership.WorkerRecord, routingID: [UInt8]) {
        let patience = deadline + configuration.heartbeatInterval
        let held = "worker id `\(hello.workerID)` is held by a live process at \(idClaims.describeAddress(of: hello.workerID)) "
            + "(instance \(holder.instance), heard \((now - holder.lastHeard).milliseconds) ms ago); this HELLO came from "
            + WorkerIDClaims.describe(address: peerAddress)
        switch idClaims.claim(hello.workerID, by: hello.instance, at: now, patience: patience, holderHeard: holder.lastHeard) {
        case .retry:
            refuse(hello, code: .workerIDBusy, reason: held + ". If that process crashed, its registration lapses after "
                + "\(deadline.milliseconds) ms of silence and a HELLO after that takes the id over", to: routingID)
        case .refuse:
            refuse(hello, code: .duplicateWorker, reason: held + ". It kept talking through \(patience.milliseconds) ms "
                + "of this claim, so it is alive: stop one of the two, or give this one another --id", to: routingID)
        }
    }

    private var welcome: Message {
        .welcome(.init(
            epoch: epoch, sequence: lastCompleted, publishEndpoint: advertisedPublishEndpoint,
            heartbeatMillis: UInt32(configuration.heartbeatInterval.milliseconds),
            deadlineMillis: UInt32(deadline.milliseconds)))
    }

    func refuse(_ hello: Message.Hello, code: Message.Reject.Code, reason: String, to routingID: [UInt8]) {
        // At most one line per second, with the running count, so a flood of HELLOs cannot flood the log.
        if policing.countRefusal(at: now) {
            logger.warning("refused worker", metadata: [
                "worker": "\(hello.workerID)", "code": "\(code)", "reason": "\(reason)", "refusedTotal": "\(policing.refused)",
            ])
        }
        send(.reject(.init(code: code, reason: reason)), to: routingID)
    }

    /// Tells a peer that is not a member to join first.
    func sendStrangerGoodbye(_ reason: String, to routingID: [UInt8]) {
        policing.countStranger()
        send(.goodbye(.init(reason: reason)), to: routingID)
    }

    func markReady(_ ready: Message.Ready, routingID: [UInt8]) {
        guard let workerID = workerByRoutingID[routingID], let worker = membership.workers[workerID] else {
            return sendStrangerGoodbye("unknown worker: send HELLO first", to: routingID)
        }
        guard ready.epoch == epoch, worker.state == .catchingUp else { return }
        membership.recordApplied(ready.lastApplied, by: workerID)
        // The worker caught up to what it knew of and its subscription works. The bus may have moved on a few
        // dispatches since it sent READY; it is counted from the next dispatch anyway, because it applies strictly
        // in order and fetches any gap before it runs that dispatch.
        membership.setState(.live, of: workerID)
        logger.info("worker live", metadata: ["worker": "\(workerID)", "seq": "\(ready.lastApplied)"])
        checkRecovery()
    }

    func receiveHeartbeat(_ heartbeat: Message.Heartbeat, routingID: [UInt8]) {
        guard let workerID = workerByRoutingID[routingID], let worker = membership.workers[workerID],
            worker.state == .live || worker.state == .catchingUp, heartbeat.epoch == epoch
        else {
            // A worker we do not know (or have written off) is still talking: tell it to join again.
            return sendStrangerGoodbye("not a member of epoch \(epoch): send HELLO to join", to: routingID)
        }
        membership.recordApplied(heartbeat.sequence, by: workerID)
    }

    func receiveGoodbye(_ goodbye: Message.Goodbye, routingID: [UInt8]) {
        guard let workerID = workerByRoutingID[routingID] else { return }
        logger.info("worker left", metadata: ["worker": "\(workerID)", "reason": "\(goodbye.reason)"])
        releaseReplicas(of: workerID, as: .gone, reason: "left: \(goodbye.reason)")
    }

    func markLost(_ workerID: String, reason: String) {
        guard let state = membership.workers[workerID]?.state, state == .live || state == .catchingUp else { return }
        logger.warning("worker lost", metadata: ["worker": "\(workerID)", "reason": "\(reason)"])
        releaseReplicas(of: workerID, as: .lost, reason: reason)
    }

    /// Takes a worker's replicas out of the live set; the dispatch in flight stops waiting for them.
    func releaseReplicas(of workerID: String, as state: WorkerState, reason: String) {
        membership.setState(state, of: workerID)
        abandonStateRequests(askedOf: workerID, reason: reason)
        for index in flights.openIndices {
            for position in flights[index].writeOff(workerID, reason: "worker `\(workerID)` \(reason)") {
                settle(flights[index].plan[position].store, at: index)
            }
        }
        completeIfDone()
    }
}
