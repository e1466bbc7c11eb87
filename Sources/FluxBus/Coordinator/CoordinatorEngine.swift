import Flux
import FluxBusProtocol
import Logging
import ZeroMQ

/// The coordinator's state and rules. It lives on the coordinator's I/O thread and is only ever touched there:
/// every message and timer tick is handled to the end before the next, so it needs no locks.
final class CoordinatorEngine {
    struct QueuedDispatch {
        var requesters: [Requester]
        let message: Message.Dispatch
    }

    struct StateQuery {
        let requester: Requester
        let deadline: ContinuousClock.Instant
    }

    let configuration: CoordinatorConfiguration
    let epoch: UInt64
    let advertisedPublishEndpoint: String
    /// The first control endpoint bound, with a wildcard port resolved.
    let routerEndpoint: String
    var logger: Logger
    let codec: Codec
    private let router: ZMQSocket
    private let publisher: ZMQSocket

    var membership: Membership
    var workerByRoutingID: [[UInt8]: String] = [:]
    var queue = FIFO<QueuedDispatch>()
    /// The request ids waiting in the queue, with the requesters that sent the same id again meanwhile: a lookup
    /// instead of a scan of the queue for every DISPATCH.
    var queuedRequestIDs: [String: [Requester]] = [:]
    var inFlight: InFlightDispatch?
    /// The last sequence published, and the last one completed.
    var lastSequence: UInt64 = 0
    var lastCompleted: UInt64 = 0
    var history: History
    /// Results of recent requests, so that a client retrying with the same request id gets the original result.
    private var recentResults: [String: Message.Result] = [:]
    private var recentResultOrder = FIFO<String>()
    private var stateQueries: [String: StateQuery] = [:]
    private var nextQueryNumber = 0
    private var lastPublishAt = ContinuousClock.now
    private(set) var isShuttingDown = false
    /// Messages that failed to decode or made no sense from their sender (or came from a quarantined peer):
    /// counted, logged, dropped.
    private(set) var malformedCount = 0
    /// HELLOs refused, for any reason.
    private(set) var refusedCount = 0
    /// Messages from peers that are not members, answered with GOODBYE.
    private(set) var strangerCount = 0
    private var refusalLoggedAt: ContinuousClock.Instant?
    private var malformedLoggedAt: ContinuousClock.Instant?
    /// Peers that sent too many malformed messages, until when everything they send is dropped unread.
    private var quarantinedUntil: [[UInt8]: ContinuousClock.Instant] = [:]
    /// Malformed messages per peer in the current one-second window.
    private var malformedThisSecond: [[UInt8]: Int] = [:]
    private var malformedWindowStart = ContinuousClock.now
    private(set) var quarantinedPeers = 0
    /// When each peer last got a version-mismatch REJECT, so two mismatched peers cannot flood each other.
    private var versionRejects: [[UInt8]: ContinuousClock.Instant] = [:]
    /// When ``versionRejects`` and ``quarantinedUntil`` were last cleared of records that no longer matter.
    private var peerRecordsPrunedAt = ContinuousClock.now

    init(
        configuration: CoordinatorConfiguration, epoch: UInt64, router: ZMQSocket, publisher: ZMQSocket,
        controlEndpoint: String, advertisedPublishEndpoint: String, logger: Logger
    ) {
        self.routerEndpoint = controlEndpoint
        self.configuration = configuration
        self.epoch = epoch
        self.router = router
        self.publisher = publisher
        self.advertisedPublishEndpoint = advertisedPublishEndpoint
        self.logger = logger
        self.logger[metadataKey: "epoch"] = "\(epoch)"
        self.codec = Codec(limits: configuration.limits)
        self.membership = Membership(topology: configuration.topology)
        self.history = History(limit: configuration.historyLimit)
    }

    var deadline: Duration { configuration.heartbeatInterval * configuration.livenessIntervals }


    // MARK: - Input

    /// Handles everything waiting on the ROUTER.
    func drainRouter() throws {
        while let (frames, userID) = try router.tryReceiveWithUserID() {
            handle(frames, userID: userID)
        }
        pump()
    }

    /// Handles one message from the ROUTER. With CURVE, `userID` is the name the ZAP handler bound to the sender's
    /// key; a HELLO must declare exactly that name, from a key with the worker (or admin) role.
    func handle(_ frames: [[UInt8]], userID: String? = nil) {
        guard frames.count >= 2 else { return dropMalformed("a message with no routing id", from: nil) }
        let routingID = frames[0]
        if let until = quarantinedUntil[routingID] {
            if ContinuousClock.now < until {
                malformedCount += 1
                return
            }
            quarantinedUntil[routingID] = nil
        }
        let message: Message
        do {
            message = try codec.decode(Array(frames.dropFirst()))
        } catch {
            if let version = error.foundVersion, versionRejects[routingID].map({ ContinuousClock.now - $0 >= deadline }) ?? true {
                versionRejects[routingID] = .now
                send(.reject(.init(code: .versionMismatch, reason:
                    "this coordinator speaks FluxBus protocol version \(Codec.version), not \(version); "
                    + "upgrade the peer or the coordinator so both speak the same version")), to: routingID)
            }
            return dropMalformed(error.description, from: routingID)
        }
        let now = ContinuousClock.now
        let workerID = workerByRoutingID[routingID]
        // With CURVE, a connection speaks only for the name bound to its key. ROUTER_HANDOVER lets any connection
        // claim a worker's routing id, so a message arriving under a worker's routing id from another key must not
        // count as that worker's.
        if configuration.security != nil, let workerID, userID != workerID {
            return dropMalformed(
                "a message under worker `\(workerID)`'s routing id from "
                    + (userID.map { "the key named `\($0)`" } ?? "a connection without a key"), from: routingID)
        }
        if let workerID { membership.heard(from: workerID, at: now) }

        switch message {
        case .hello(let hello):
            if let refusal = authorizationRefusal(for: hello, userID: userID) {
                return refuse(hello, code: .unauthorized, reason: refusal, to: routingID)
            }
            join(hello, routingID: routingID, now: now)
        case .ready(let ready): markReady(ready, routingID: routingID)
        case .ack(let ack): receiveAck(ack, routingID: routingID)
        case .heartbeat(let heartbeat): receiveHeartbeat(heartbeat, routingID: routingID)
        case .goodbye(let goodbye): receiveGoodbye(goodbye, routingID: routingID)
        case .fetch(let fetch): serveFetch(fetch, routingID: routingID)
        case .dispatch(let dispatch): enqueue(dispatch, routingID: routingID)
        case .statusRequest(let request): send(.status(status(requestID: request.requestID)), to: routingID)
        case .graphRequest(let request): send(.graph(graph(requestID: request.requestID)), to: routingID)
        case .stateRequest(let request): forwardStateRequest(request, routingID: routingID, now: now)
        case .state(let state): forwardState(state, routingID: routingID)
        case .error(let error) where workerByRoutingID[routingID] != nil && stateQueries[error.requestID] != nil:
            let query = stateQueries.removeValue(forKey: error.requestID)!
            send(.error(.init(requestID: query.requester.requestID, code: error.code, message: error.message)),
                 to: query.requester.routingID)
        case .welcome, .reject, .action, .release, .replay, .snapshot, .result, .error, .status, .graph, .completed:
            dropMalformed("\(message.command) is never sent to a coordinator", from: routingID)
        }
    }

    /// Why a HELLO is not allowed from the key it came with, or nil when it is (or CURVE is off).
    private func authorizationRefusal(for hello: Message.Hello, userID: String?) -> String? {
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

    func dropMalformed(_ reason: String, from routingID: [UInt8]?) {
        malformedCount += 1
        let now = ContinuousClock.now
        if let routingID { countAgainst(routingID, at: now) }
        // At most one line per second, with the running count, so a flood cannot flood the log.
        if malformedLoggedAt.map({ now - $0 >= .seconds(1) }) ?? true {
            malformedLoggedAt = now
            logger.warning(
                "dropped a malformed message",
                metadata: [
                    "reason": "\(reason)", "peer": "\(routingID.map(Self.describe) ?? "?")",
                    "malformedTotal": "\(malformedCount)",
                ])
        }
    }

    /// Counts a malformed message against its sender, and quarantines a sender past the rate.
    private func countAgainst(_ routingID: [UInt8], at now: ContinuousClock.Instant) {
        if now - malformedWindowStart >= .seconds(1) {
            malformedThisSecond.removeAll(keepingCapacity: true)
            malformedWindowStart = now
        }
        malformedThisSecond[routingID, default: 0] += 1
        guard malformedThisSecond[routingID]! > configuration.maxMalformedPerSecond else { return }
        quarantinedUntil[routingID] = now.advanced(by: configuration.quarantine)
        malformedThisSecond[routingID] = nil
        quarantinedPeers += 1
        logger.warning("quarantined a peer: too many malformed messages; everything it sends is dropped unread", metadata: [
            "peer": "\(Self.describe(routingID))", "limitPerSecond": "\(configuration.maxMalformedPerSecond)",
            "seconds": "\(configuration.quarantine.components.seconds)",
        ])
        if let workerID = workerByRoutingID[routingID] { markLost(workerID, reason: "quarantined for malformed messages") }
    }

    // MARK: - Output

    func send(_ message: Message, to routingID: [UInt8]) {
        do {
            if try !router.send([routingID] + codec.encode(message), nonBlocking: true) {
                logger.warning("send queue full, dropped \(message.command)", metadata: ["peer": "\(Self.describe(routingID))"])
            }
        } catch {
            // ROUTER_MANDATORY: the peer is gone. Liveness will notice; nothing else to do here.
            logger.debug("cannot send \(message.command): \(error)", metadata: ["peer": "\(Self.describe(routingID))"])
        }
    }

    func send(_ message: Message, toWorker workerID: String) {
        guard let routingID = membership.workers[workerID]?.routingID else { return }
        send(message, to: routingID)
    }

    func publish(_ message: Message) {
        do {
            _ = try publisher.send(codec.encode(message), nonBlocking: true)
        } catch {
            logger.error("cannot publish \(message.command): \(error)")
        }
        lastPublishAt = .now
    }

    static func describe(_ routingID: [UInt8]) -> String {
        if let text = String(validating: routingID, as: UTF8.self), text.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value < 0x7f }) {
            return text
        }
        return routingID.map { String($0, radix: 16) }.joined()
    }

    // MARK: - Membership

    private func join(_ hello: Message.Hello, routingID: [UInt8], now: ContinuousClock.Instant) {
        guard Array(hello.workerID.utf8) == routingID else {
            return refuse(hello, code: .invalidDeclaration, reason:
                "worker id `\(hello.workerID)` differs from the connection's routing id `\(Self.describe(routingID))`; "
                + "set ZMQ_ROUTING_ID to the worker id before connecting", to: routingID)
        }
        guard hello.stores.count <= configuration.maxStoresPerWorker else {
            return refuse(hello, code: .tooMany, reason:
                "worker `\(hello.workerID)` declares \(hello.stores.count) stores; this coordinator accepts at most "
                + "\(configuration.maxStoresPerWorker) per worker", to: routingID)
        }
        guard membership.workers[hello.workerID] != nil || membership.workers.count < configuration.maxWorkers else {
            return refuse(hello, code: .tooMany, reason:
                "this coordinator already has \(membership.workers.count) workers, its limit", to: routingID)
        }
        do {
            // A new instance under a known id is a restarted worker: it takes over from the old one.
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
        send(.welcome(.init(
            epoch: epoch, sequence: lastCompleted, publishEndpoint: advertisedPublishEndpoint,
            heartbeatMillis: UInt32(configuration.heartbeatInterval.milliseconds),
            deadlineMillis: UInt32(deadline.milliseconds))), to: routingID)
    }

    private func refuse(_ hello: Message.Hello, code: Message.Reject.Code, reason: String, to routingID: [UInt8]) {
        refusedCount += 1
        // At most one line per second, with the running count, so a flood of HELLOs cannot flood the log.
        let now = ContinuousClock.now
        if refusalLoggedAt.map({ now - $0 >= .seconds(1) }) ?? true {
            refusalLoggedAt = now
            logger.warning("refused worker", metadata: [
                "worker": "\(hello.workerID)", "code": "\(code)", "reason": "\(reason)", "refusedTotal": "\(refusedCount)",
            ])
        }
        send(.reject(.init(code: code, reason: reason)), to: routingID)
    }

    /// How many requesters wait on one request id: the first and a few retries.
    static let requestersPerRequest = 8

    /// Tells a peer that is not a member to join first.
    func sendStrangerGoodbye(_ reason: String, to routingID: [UInt8]) {
        strangerCount += 1
        send(.goodbye(.init(reason: reason)), to: routingID)
    }

    private func markReady(_ ready: Message.Ready, routingID: [UInt8]) {
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
    }

    private func receiveHeartbeat(_ heartbeat: Message.Heartbeat, routingID: [UInt8]) {
        guard let workerID = workerByRoutingID[routingID], let worker = membership.workers[workerID],
            worker.state == .live || worker.state == .catchingUp, heartbeat.epoch == epoch
        else {
            // A worker we do not know (or have written off) is still talking: tell it to join again.
            return sendStrangerGoodbye("not a member of epoch \(epoch): send HELLO to join", to: routingID)
        }
        membership.recordApplied(heartbeat.sequence, by: workerID)
    }

    private func receiveGoodbye(_ goodbye: Message.Goodbye, routingID: [UInt8]) {
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
    private func releaseReplicas(of workerID: String, as state: WorkerState, reason: String) {
        membership.setState(state, of: workerID)
        guard var flight = inFlight else { return }
        var emptied: [String] = []
        for (store, workers) in flight.awaiting where workers.contains(workerID) {
            flight.awaiting[store]!.remove(workerID)
            flight.lost[store, default: []].append((workerID, "worker `\(workerID)` \(reason)"))
            if flight.awaiting[store]!.isEmpty { emptied.append(store) }
        }
        inFlight = flight
        for store in emptied { settle(store) }
    }

    // MARK: - Timers

    /// Runs every tick: heartbeats, liveness, re-sends and deadlines.
    func tick(now: ContinuousClock.Instant = .now) {
        let joining = membership.workers.values.contains { $0.state == .catchingUp }
        // While a worker is joining, beat on every tick so that its first message on SUB comes soon.
        if joining || now - lastPublishAt >= configuration.heartbeatInterval {
            publish(.heartbeat(.init(epoch: epoch, sequence: lastSequence)))
        }
        for worker in membership.workers.values where worker.state == .live || worker.state == .catchingUp {
            if now - worker.lastHeard > deadline {
                markLost(worker.id, reason: "silent for \((now - worker.lastHeard).milliseconds) ms")
            }
        }
        checkInFlight(now: now)
        prunePeerRecords(now: now)
        for (id, query) in stateQueries where query.deadline <= now {
            stateQueries[id] = nil
            send(.error(.init(requestID: query.requester.requestID, code: .timeout,
                              message: "the replica did not answer the state request in time; try again")),
                 to: query.requester.routingID)
        }
        pump()
    }

    /// Once a second, forgets version-mismatch REJECTs older than the deadline (they no longer hold anything back)
    /// and quarantines that have ended. Both are keyed by routing id, and every new connection gets a new one: without
    /// this, peers that come and go would grow them by about 85 bytes per connection, without bound.
    private func prunePeerRecords(now: ContinuousClock.Instant) {
        guard now - peerRecordsPrunedAt >= .seconds(1) else { return }
        peerRecordsPrunedAt = now
        versionRejects = versionRejects.filter { now - $0.value < deadline }
        quarantinedUntil = quarantinedUntil.filter { now < $0.value }
    }

    // MARK: - Requests

    private func enqueue(_ dispatch: Message.Dispatch, routingID: [UInt8]) {
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

    private func forwardStateRequest(_ request: Message.StateRequest, routingID: [UInt8], now: ContinuousClock.Instant) {
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

    private func forwardState(_ state: Message.State, routingID: [UInt8]) {
        guard workerByRoutingID[routingID] != nil, let query = stateQueries.removeValue(forKey: state.requestID) else {
            return dropMalformed("STATE for no pending request", from: routingID)
        }
        var reply = state
        reply.requestID = query.requester.requestID
        send(.state(reply), to: query.requester.routingID)
    }

    private func serveFetch(_ request: Message.Fetch, routingID: [UInt8]) {
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

    // MARK: - Shutdown

    /// Stops accepting dispatches; the one in flight and those queued still complete.
    func beginShutdown() {
        isShuttingDown = true
    }

    /// Whether nothing is in flight or queued.
    var isIdle: Bool { inFlight == nil && queue.isEmpty }
}
