import Flux
import FluxBusProtocol
import Logging
import ZeroMQ

/// The coordinator's state and rules. It lives on the coordinator's I/O thread and is only ever touched there:
/// every message and timer tick is handled to the end before the next, so it needs no locks.
final class CoordinatorEngine {
    /// A DISPATCH or DISPATCH_BATCH waiting its turn, its actions already logged.
    struct QueuedDispatch {
        /// The first action's sequence, given when the request was accepted and logged, so the log holds the order
        /// before anything runs.
        let sequence: UInt64
        var requesters: [Requester]
        let requestID: String
        let actions: [BatchAction]
        let isBatch: Bool
        /// The batch as accepted; after a restart, `actions` may be only the part that had not completed.
        let batchFirst: UInt64
        let batchSize: Int
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
    /// The request in flight, its dispatches (a batch has several), and how many of those completed, in order.
    var request: CurrentRequest?
    var flights: [InFlightDispatch] = []
    var completedFlights = 0
    /// Actions waiting in ``queue``: the queue limit counts actions, so that batches cannot grow it unbounded.
    var queuedActions = 0
    /// The last sequence logged, the last published, and the last completed.
    var lastLogged: UInt64
    var lastSequence: UInt64
    var lastCompleted: UInt64
    let log: ActionLog
    /// Results completed since the log was last flushed, so that a retry arriving meanwhile finds its result.
    var unflushedResults: [String: Message] = [:]
    /// After a restart: the stores of the previous run that have no live replica yet, and until when dispatching
    /// waits for them.
    var recovery: (stores: Set<String>, until: ContinuousClock.Instant)?
    /// The snapshot round under way: query id → store, and when it gives up.
    var snapshotQueries: [String: String] = [:]
    var snapshotRoundEnds: ContinuousClock.Instant?
    var nextSnapshotRound = ContinuousClock.now
    /// Called on the I/O thread when the log cannot be written; the coordinator then stops.
    let onStorageFailure: (BusError) -> Void
    var storageFailed = false
    var stateQueries: [String: StateQuery] = [:]
    var nextQueryNumber = 0
    /// Where a message goes: the PUB stream, or one peer on the ROUTER.
    enum Destination: Hashable {
        case stream
        case peer([UInt8])
    }
    /// What is sent while a burst of input is handled goes out together at its end.
    var outbox = Outbox<Destination>()
    var lastPublishAt = ContinuousClock.now
    var isShuttingDown = false
    /// Messages that failed to decode or made no sense from their sender (or came from a quarantined peer):
    /// counted, logged, dropped.
    var malformedCount = 0
    /// HELLOs refused, for any reason.
    var refusedCount = 0
    /// Messages from peers that are not members, answered with GOODBYE.
    var strangerCount = 0
    var refusalLoggedAt: ContinuousClock.Instant?
    var malformedLoggedAt: ContinuousClock.Instant?
    /// Peers that sent too many malformed messages, until when everything they send is dropped unread.
    var quarantinedUntil: [[UInt8]: ContinuousClock.Instant] = [:]
    /// Malformed messages per peer in the current one-second window.
    var malformedThisSecond: [[UInt8]: Int] = [:]
    var malformedWindowStart = ContinuousClock.now
    var quarantinedPeers = 0
    /// When each peer last got a version-mismatch REJECT, so two mismatched peers cannot flood each other.
    var versionRejects: [[UInt8]: ContinuousClock.Instant] = [:]
    /// When ``versionRejects`` and ``quarantinedUntil`` were last cleared of records that no longer matter.
    var peerRecordsPrunedAt = ContinuousClock.now

    init(
        configuration: CoordinatorConfiguration, epoch: UInt64, log: ActionLog, recovered: ActionLog.Recovered,
        router: ZMQSocket, publisher: ZMQSocket, controlEndpoint: String, advertisedPublishEndpoint: String, logger: Logger,
        onStorageFailure: @escaping (BusError) -> Void
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
        self.log = log
        self.onStorageFailure = onStorageFailure
        lastLogged = recovered.lastSequence
        lastSequence = recovered.lastCompleted
        lastCompleted = recovered.lastCompleted
        // Actions logged and not completed run again, in order, under this epoch and with their sequences. A worker
        // that applied one before the restart acknowledges it again without applying it.
        for pending in recovered.pending {
            queue.push(QueuedDispatch(
                sequence: pending.sequence, requesters: [], requestID: pending.requestID, actions: pending.actions,
                isBatch: pending.batchSize > 0, batchFirst: pending.batchFirst ?? pending.sequence,
                batchSize: max(pending.batchSize, 1)))
            queuedActions += pending.actions.count
            if !pending.requestID.isEmpty { queuedRequestIDs[pending.requestID] = [] }
        }
        if !recovered.stores.isEmpty {
            recovery = (Set(recovered.stores), ContinuousClock.now.advanced(by: configuration.recoveryGrace))
        }
        log.beginEpoch(epoch)
    }

    var deadline: Duration { configuration.heartbeatInterval * configuration.livenessIntervals }

    // MARK: - Input

    /// Handles everything waiting on the ROUTER, sending what it causes together (in bursts of at most 512 inputs,
    /// so that a flood cannot hold replies back without end).
    func drainRouter() throws {
        outbox.hold()
        var handled = 0
        while let (frames, userID) = try router.tryReceiveWithUserID() {
            handle(frames, userID: userID)
            handled += 1
            if handled % 512 == 0 {
                flushOutbox()
                outbox.hold()
            }
        }
        pump()
        flushOutbox()
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
        let messages: [Message]
        do {
            messages = try codec.decodeAll(Array(frames.dropFirst()))
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
        for message in messages { handle(message, routingID: routingID, userID: userID, now: now) }
    }

    /// Handles one decoded message (a BUNDLE's are handled one by one, in order).
    private func handle(_ message: Message, routingID: [UInt8], userID: String?, now: ContinuousClock.Instant) {
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
        case .dispatch(let dispatch):
            enqueue(requestID: dispatch.requestID, [BatchAction(actionType: dispatch.actionType, payload: dispatch.payload, error: dispatch.error)],
                    isBatch: false, routingID: routingID)
        case .dispatchBatch(let batch): enqueue(requestID: batch.requestID, batch.actions, isBatch: true, routingID: routingID)
        case .statusRequest(let request): send(.status(status(requestID: request.requestID)), to: routingID)
        case .graphRequest(let request): send(.graph(graph(requestID: request.requestID)), to: routingID)
        case .stateRequest(let request): forwardStateRequest(request, routingID: routingID, now: now)
        case .state(let state) where snapshotQueries[state.requestID] != nil: receiveSnapshot(state, routingID: routingID)
        case .state(let state): forwardState(state, routingID: routingID)
        case .error(let error) where workerByRoutingID[routingID] != nil && snapshotQueries[error.requestID] != nil:
            snapshotQueries[error.requestID] = nil
        case .error(let error) where workerByRoutingID[routingID] != nil && stateQueries[error.requestID] != nil:
            let query = stateQueries.removeValue(forKey: error.requestID)!
            send(.error(.init(requestID: query.requester.requestID, code: error.code, message: error.message)),
                 to: query.requester.routingID)
        case .bundle:
            dropMalformed("a BUNDLE inside a BUNDLE", from: routingID)  // decodeAll refuses these first
        case .welcome, .reject, .action, .release, .replay, .snapshot, .result, .error, .status, .graph, .completed, .batchResult:
            dropMalformed("\(message.command) is never sent to a coordinator", from: routingID)
        }
    }

    // MARK: - Output

    func send(_ message: Message, to routingID: [UInt8]) {
        if outbox.hold(message, for: .peer(routingID)) { return }
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
        lastPublishAt = .now
        if outbox.hold(message, for: .stream) { return }
        do {
            _ = try publisher.send(codec.encode(message), nonBlocking: true)
        } catch {
            logger.error("cannot publish \(message.command): \(error)")
        }
        lastPublishAt = .now
    }

    /// Sends what the outbox held.
    func flushOutbox() {
        for (destination, message) in outbox.release(codec: codec) {
            switch destination {
            case .stream: publish(message)
            case .peer(let routingID): send(message, to: routingID)
            }
        }
    }

    static func describe(_ routingID: [UInt8]) -> String {
        if let text = String(validating: routingID, as: UTF8.self), text.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value < 0x7f }) {
            return text
        }
        return routingID.map { String($0, radix: 16) }.joined()
    }

    // MARK: - Timers

    /// Runs every tick: heartbeats, liveness, re-sends and deadlines.
    func tick(now: ContinuousClock.Instant = .now) {
        outbox.hold()
        defer { flushOutbox() }
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
        checkRecovery(now: now)
        compactIfDue(now: now)
        for (id, query) in stateQueries where query.deadline <= now {
            stateQueries[id] = nil
            send(.error(.init(requestID: query.requester.requestID, code: .timeout,
                              message: "the replica did not answer the state request in time; try again")),
                 to: query.requester.routingID)
        }
        flushLog()
        log.syncIfBatched()
        pump()
    }

    // MARK: - Shutdown

    /// Stops accepting dispatches; the one in flight and those queued still complete.
    func beginShutdown() {
        isShuttingDown = true
    }

    /// Whether nothing is in flight or queued.
    var isIdle: Bool { request == nil && queue.isEmpty }
}
