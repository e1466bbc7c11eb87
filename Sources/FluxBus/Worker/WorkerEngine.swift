import Flux
import FluxBusProtocol
import Logging
import ZeroMQ

/// A worker's state and rules. It lives on the worker's I/O thread: store handlers run there too, so a handler that
/// hangs also stops the heartbeats, and the coordinator notices (liveness comes from application messages).
final class WorkerEngine {
    enum Phase { case joining, catchingUp, live, stopped }

    let id: String
    let instance = UInt64.random(in: 1...UInt64.max)
    let stores: [AnyStore]
    private let storesByName: [String: AnyStore]
    let codec: Codec
    var logger: Logger
    private let scope: IOLoopScope
    private let dealer: ZMQSocket
    private var subscriber: ZMQSocket?
    private var subscribedEndpoint: String?
    private let events: AsyncStream<WorkerEvent>.Continuation
    private let onStop: (BusError?) -> Void
    private let journal: Journal?

    private(set) var phase = Phase.joining
    private var epoch: UInt64 = 0
    private(set) var lastApplied: UInt64
    /// The newest sequence the coordinator has told us about, and the newest it told us completed.
    private var knownSequence: UInt64 = 0
    private var knownCompleted: UInt64 = 0
    /// Whether a message of the current epoch arrived on SUB, proving the subscription works.
    private var heardOnSubscriber = false
    private var current: LocalDispatch?
    private var pendingActions: [UInt64: Message.Action] = [:]
    private var pendingReleases: [UInt64: [StoreOutput]] = [:]
    private var ackMemory: [UInt64: [StoreResult]] = [:]
    private var ackMemoryOrder = FIFO<UInt64>()
    private let ackMemoryLimit = 4_096
    /// ACTIONs kept while an earlier one is missing; past this, later ones are dropped and fetched when their turn
    /// comes, so a flood cannot grow the worker without bound.
    private let pendingActionLimit = 10_000
    private var heartbeat: Duration
    private var deadline: Duration
    private var lastHeard = ContinuousClock.now
    private var lastHelloAt: ContinuousClock.Instant?
    private var fetchSentAt: ContinuousClock.Instant?
    private var stopping = false
    private(set) var malformedCount = 0
    /// CURVE for the SUB socket, like the DEALER's.
    var security: PeerSecurity?
    /// Fault injection: see ``WorkerConfiguration/dropPublishedRate``.
    var dropPublishedRate = 0.0
    private(set) var droppedByInjection = 0

    init(
        id: String, stores: [AnyStore], lastApplied: UInt64 = 0, scope: IOLoopScope, dealer: ZMQSocket,
        heartbeat: Duration, logger: Logger, events: AsyncStream<WorkerEvent>.Continuation, journal: Journal? = nil,
        onStop: @escaping (BusError?) -> Void
    ) {
        self.journal = journal
        self.id = id
        self.stores = stores
        self.storesByName = Dictionary(uniqueKeysWithValues: stores.map { ($0.name, $0) })
        self.lastApplied = lastApplied
        self.scope = scope
        self.dealer = dealer
        self.heartbeat = heartbeat
        self.deadline = heartbeat * BusDefaults.livenessIntervals
        self.codec = Codec()
        self.logger = logger
        self.logger[metadataKey: "worker"] = "\(id)"
        self.events = events
        self.onStop = onStop
    }

    // MARK: - Joining

    func sayHello() {
        phase = .joining
        lastHelloAt = .now
        let declarations = stores.map { store in
            StoreDeclaration(
                name: store.name, dependsOn: store.dependencies, handlesAll: store.handlesAllActions,
                handles: store.actionNames, lastApplied: lastApplied)
        }
        send(.hello(.init(workerID: id, instance: instance, stores: declarations)))
    }

    private func welcomed(_ welcome: Message.Welcome) throws {
        guard welcome.sequence >= lastApplied || lastApplied == 0 else {
            return stop(BusError(
                code: .refused,
                message: "the coordinator's history ends at #\(welcome.sequence) but this worker applied #\(lastApplied): "
                    + "the coordinator restarted without that history (it keeps it in memory). Restart this worker, "
                    + "and its replicas, with empty state"))
        }
        if epoch != 0, epoch != welcome.epoch {
            logger.notice("coordinator restarted; rejoined under a new epoch", metadata: ["epoch": "\(welcome.epoch)"])
        }
        epoch = welcome.epoch
        logger[metadataKey: "epoch"] = "\(epoch)"
        heartbeat = .milliseconds(Int64(max(welcome.heartbeatMillis, 10)))
        deadline = .milliseconds(Int64(max(welcome.deadlineMillis, 40)))
        knownSequence = max(knownSequence, welcome.sequence)
        knownCompleted = max(knownCompleted, welcome.sequence)
        heardOnSubscriber = false
        phase = .catchingUp
        try subscribe(to: welcome.publishEndpoint)
        events.yield(.welcomed(epoch: epoch, sequence: welcome.sequence))
        logger.info("welcomed, catching up", metadata: ["seq": "\(lastApplied)", "target": "\(welcome.sequence)"])
        catchUp()
    }

    private func subscribe(to endpoint: String) throws {
        if subscribedEndpoint == endpoint, subscriber != nil { return }
        if let old = subscriber {
            scope.remove(old)
            old.close()
        }
        let socket = try scope.socket(.sub)
        try socket.set(.receiveHighWaterMark, to: 100_000)
        try security?.apply(to: socket)
        try socket.subscribe(Codec.signature)
        try socket.connect(endpoint)
        scope.add(socket) { [unowned self] socket in try self.drain(socket, fromSubscriber: true) }
        subscriber = socket
        subscribedEndpoint = endpoint
    }

    /// Sends READY once caught up, with a working subscription and nothing in hand.
    private func readyIfCaughtUp() {
        guard phase == .catchingUp, heardOnSubscriber, current == nil, lastApplied >= knownSequence else { return }
        phase = .live
        send(.ready(.init(epoch: epoch, lastApplied: lastApplied)))
        events.yield(.live(sequence: lastApplied))
        logger.info("live", metadata: ["seq": "\(lastApplied)"])
    }

    /// Fetches what the coordinator has that we lack. A dispatch in hand that the coordinator has moved past (or
    /// reported completed) completed without us: fetch it too, to settle it from the record.
    private func catchUp() {
        if let current, knownSequence > current.sequence || knownCompleted >= current.sequence {
            requestFetch(from: current.sequence, to: max(knownSequence, current.sequence))
        } else if current == nil, knownSequence > lastApplied {
            requestFetch(from: lastApplied + 1, to: knownSequence)
        }
        readyIfCaughtUp()
    }

    private func requestFetch(from: UInt64, to: UInt64) {
        if let sent = fetchSentAt, ContinuousClock.now - sent < .seconds(1) { return }
        fetchSentAt = .now
        send(.fetch(.init(epoch: epoch, from: from, to: to)))
    }

    // MARK: - Input

    func drain(_ socket: ZMQSocket, fromSubscriber: Bool) throws {
        while let frames = try socket.tryReceive() {
            if fromSubscriber, dropPublishedRate > 0, Double.random(in: 0..<1) < dropPublishedRate {
                droppedByInjection += 1
                continue
            }
            let message: Message
            do {
                message = try codec.decode(frames)
            } catch {
                malformedCount += 1
                logger.warning("dropped a malformed message", metadata: ["reason": "\(error)", "total": "\(malformedCount)"])
                continue
            }
            lastHeard = .now
            try handle(message, fromSubscriber: fromSubscriber)
            if phase == .stopped { return }
        }
    }

    private func handle(_ message: Message, fromSubscriber: Bool) throws {
        switch message {
        case .welcome(let welcome):
            try welcomed(welcome)
        case .reject(let reject):
            events.yield(.rejected(code: reject.code, reason: reject.reason))
            logger.error("the coordinator refused this worker", metadata: ["code": "\(reject.code)", "reason": "\(reject.reason)"])
            stop(BusError(code: .refused, message: "the coordinator refused worker `\(id)`: \(reject.reason)"))
        case .goodbye(let goodbye):
            logger.notice("the coordinator asked this worker to join again", metadata: ["reason": "\(goodbye.reason)"])
            sayHello()
        case .action(let action):
            guard isCurrentEpoch(action.epoch, fromSubscriber: fromSubscriber) else { return }
            receive(action)
        case .release(let release):
            guard release.epoch == epoch else { return }
            receive(release)
        case .replay(let replay):
            guard replay.epoch == epoch else { return }
            apply(replay.entries)
        case .heartbeat(let beat):
            guard isCurrentEpoch(beat.epoch, fromSubscriber: fromSubscriber) else { return }
            knownSequence = max(knownSequence, beat.sequence)
            catchUp()
        case .completed(let completed):
            guard isCurrentEpoch(completed.epoch, fromSubscriber: fromSubscriber) else { return }
            knownSequence = max(knownSequence, completed.sequence)
            knownCompleted = max(knownCompleted, completed.sequence)
            catchUp()
        case .stateRequest(let request):
            answer(request)
        case .error(let error):
            events.yield(.cascadeRefused(requestID: error.requestID, code: error.code, message: error.message))
            logger.warning("the coordinator refused a dispatch from a handler", metadata: [
                "request": "\(error.requestID)", "code": "\(error.code)", "message": "\(error.message)",
            ])
        case .result:
            break
        case .hello, .ready, .ack, .fetch, .dispatch, .statusRequest, .status, .graphRequest, .graph, .state, .snapshot:
            malformedCount += 1
            logger.warning("dropped \(message.command), which a coordinator never sends to a worker")
        }
    }

    /// Whether a message belongs to the epoch we joined. A newer epoch on the stream means the coordinator
    /// restarted: join it again.
    private func isCurrentEpoch(_ messageEpoch: UInt64, fromSubscriber: Bool) -> Bool {
        guard phase != .joining else { return false }
        if messageEpoch == epoch {
            if fromSubscriber && !heardOnSubscriber {
                heardOnSubscriber = true
                readyIfCaughtUp()
            }
            return true
        }
        if messageEpoch > epoch, phase != .stopped {
            logger.notice("a new coordinator epoch appeared; joining again", metadata: ["new": "\(messageEpoch)"])
            sayHello()
        }
        return false
    }

    // MARK: - Dispatches

    private func receive(_ action: Message.Action) {
        knownSequence = max(knownSequence, action.sequence)
        if action.sequence <= lastApplied {
            return reacknowledge(action.sequence)
        }
        if let current {
            if current.sequence == action.sequence {
                // A re-send: the coordinator is missing our acknowledgements for what already ran.
                if !current.results.isEmpty { send(.ack(.init(epoch: epoch, sequence: action.sequence, results: current.results))) }
                return
            }
            // A later dispatch arrived while this one still waits for a release: the coordinator completed it
            // without us, so its recorded outcomes can finish it.
            keep(action)
            return requestFetch(from: current.sequence, to: action.sequence - 1)
        }
        if action.sequence == lastApplied + 1 {
            begin(action)
            drive()
        } else {
            keep(action)
            requestFetch(from: lastApplied + 1, to: action.sequence - 1)
        }
    }

    private func keep(_ action: Message.Action) {
        if pendingActions.count < pendingActionLimit { pendingActions[action.sequence] = action }
    }

    private func receive(_ release: Message.Release) {
        if current?.sequence == release.sequence {
            current!.learn(release.outputs)
            advance()
            drive()
        } else if release.sequence > lastApplied {
            pendingReleases[release.sequence, default: []].append(contentsOf: release.outputs)
        }
    }

    private func begin(_ action: Message.Action) {
        var dispatch = LocalDispatch(action: action, hosted: { self.storesByName[$0] != nil })
        if let released = pendingReleases.removeValue(forKey: action.sequence) { dispatch.learn(released) }
        current = dispatch
        advance()
    }

    /// Runs every hosted step whose dependencies are settled, acknowledges the new results in one ACK, and
    /// finishes the dispatch when no step remains.
    private func advance() {
        guard var dispatch = current else { return }
        var fresh: [StoreResult] = []
        while let (index, blocked) = dispatch.nextRunnable() {
            let step = dispatch.remaining.remove(at: index)
            let store = storesByName[step.store]!
            let result: StoreResult
            if let blocked {
                let reason = "waits for `\(blocked.store)`, which \(blocked.status == .failed ? "failed" : blocked.status == .lost ? "was lost" : "was skipped")"
                result = StoreResult(store: store.name, status: .skipped, message: reason, digest: digest(of: store))
                dispatch.outcomes[store.name] = .init(status: .skipped, message: reason, output: nil)
            } else {
                result = run(store, in: &dispatch, step: step)
            }
            fresh.append(result)
            journal?.record(sequence: dispatch.sequence, store: store.name, status: result.status)
            events.yield(.applied(sequence: dispatch.sequence, store: store.name, status: result.status))
            logger.debug("applied", metadata: [
                "seq": "\(dispatch.sequence)", "store": "\(store.name)", "status": "\(result.status)",
            ])
        }
        dispatch.results += fresh
        current = dispatch
        if !fresh.isEmpty, !dispatch.isReplay { send(.ack(.init(epoch: epoch, sequence: dispatch.sequence, results: fresh))) }
        if dispatch.remaining.isEmpty { finish() }
    }

    private func run(_ store: AnyStore, in dispatch: inout LocalDispatch, step: PlanStep) -> StoreResult {
        var outputs: [String: Value] = [:]
        for dependency in step.waitsFor { outputs[dependency] = dispatch.outcomes[dependency]?.output }
        // A cascade's request id names what caused it, not this process: every replica of the store, and a replica
        // replaying this sequence later, sends the same id, so the coordinator dispatches it once.
        let cause = "cascade-\(dispatch.sequence)-\(store.name)-"
        var cascades = 0
        let context = DispatchContext(
            sequence: dispatch.sequence, store: store.name, dependencies: store.dependencies, outputs: outputs,
            cascade: { [unowned self] action in
                cascades += 1
                try self.cascade(action, requestID: cause + String(cascades))
            })
        var status = OutcomeStatus.ok
        var message = ""
        do {
            _ = try store.apply(dispatch.action, context: context)
        } catch {
            status = .failed
            message = Self.truncated(ActionError(describing: error).message)
        }
        let output = status == .ok ? store.output() : nil
        dispatch.outcomes[store.name] = .init(status: status, message: message, output: output)
        let encodedOutput = try? output?.encoded()
        return StoreResult(store: store.name, status: status, message: message, output: encodedOutput, digest: digest(of: store))
    }

    /// Error messages travel in a protocol string, at most 4096 bytes; keep them well inside that.
    static func truncated(_ message: String, limit: Int = 1024) -> String {
        guard message.utf8.count > limit else { return message }
        var cut = message.utf8.prefix(limit)
        while String(cut) == nil { cut = cut.dropLast() }
        return String(cut)! + "…"
    }

    private func digest(of store: AnyStore) -> UInt64 {
        (try? store.encodedState()).map(StateDigest.fnv1a64) ?? 0
    }

    private func finish() {
        guard let dispatch = current else { return }
        lastApplied = dispatch.sequence
        remember(dispatch.sequence, dispatch.results)
        current = nil
        pendingReleases = pendingReleases.filter { $0.key > lastApplied }
        if stopping { return sayGoodbye() }
        readyIfCaughtUp()
    }

    /// Starts buffered dispatches that are next in line.
    private func drive() {
        while current == nil, phase != .stopped, let next = pendingActions.removeValue(forKey: lastApplied + 1) {
            begin(next)
        }
    }

    private func apply(_ entries: [ReplayEntry]) {
        // An empty REPLAY brings nothing new; keep the throttle so the worker does not ask again at once.
        if !entries.isEmpty { fetchSentAt = nil }
        for entry in entries.sorted(by: { $0.sequence < $1.sequence }) {
            if let current, current.sequence == entry.sequence {
                // The dispatch in hand completed without us: settle what is pending from the recorded outcomes.
                self.current!.learn(entry.outputs.filter { storesByName[$0.store] == nil })
                self.current!.isReplay = true
                advance()
                continue
            }
            guard current == nil, entry.sequence == lastApplied + 1 else { continue }
            let action = Message.Action(
                epoch: entry.epoch, sequence: entry.sequence, actionType: entry.actionType, payload: entry.payload,
                error: entry.error, plan: entry.plan)
            var dispatch = LocalDispatch(action: action, hosted: { self.storesByName[$0] != nil })
            dispatch.isReplay = true
            // Remote stores' recorded outcomes; a store missing from the record counts as lost.
            dispatch.learn(entry.outputs.filter { storesByName[$0.store] == nil })
            dispatch.learn(entry.plan.filter { storesByName[$0.store] == nil }.map {
                StoreOutput(store: $0.store, status: .lost, message: "not in the recorded history")
            })
            current = dispatch
            advance()
        }
        drive()
        catchUp()
    }

    private func reacknowledge(_ sequence: UInt64) {
        guard let results = ackMemory[sequence] else { return }
        send(.ack(.init(epoch: epoch, sequence: sequence, results: results)))
    }

    private func remember(_ sequence: UInt64, _ results: [StoreResult]) {
        guard !results.isEmpty else { return }
        ackMemory[sequence] = results
        ackMemoryOrder.push(sequence)
        while ackMemoryOrder.count > ackMemoryLimit, let old = ackMemoryOrder.pop() { ackMemory[old] = nil }
    }

    private func cascade(_ action: AnyAction, requestID: String) throws {
        send(.dispatch(.init(
            requestID: requestID, actionType: action.name, payload: try action.encodedPayload(),
            error: action.error?.message)))
    }

    private func answer(_ request: Message.StateRequest) {
        guard let store = storesByName[request.store], let state = try? store.encodedState() else {
            logger.warning("state requested for a store this worker does not host", metadata: ["store": "\(request.store)"])
            return send(.error(.init(
                requestID: request.requestID, code: .unknownStore,
                message: "worker `\(id)` does not host store `\(request.store)`")))
        }
        send(.state(.init(
            requestID: request.requestID, store: store.name, worker: id, sequence: lastApplied,
            digest: StateDigest.fnv1a64(state), state: state)))
    }

    // MARK: - Timers and stopping

    func tick(now: ContinuousClock.Instant = .now) {
        switch phase {
        case .stopped:
            return
        case .joining:
            if lastHelloAt.map({ now - $0 >= .seconds(1) }) ?? true { sayHello() }
        case .catchingUp, .live:
            if now - lastHeard > deadline {
                logger.warning("the coordinator is silent; joining again", metadata: ["silentMillis": "\((now - lastHeard).milliseconds)"])
                lastHeard = now
                return sayHello()
            }
            send(.heartbeat(.init(epoch: epoch, sequence: lastApplied)))
            if let sent = fetchSentAt, now - sent >= .seconds(1) {
                fetchSentAt = nil
                catchUp()
            }
        }
    }

    var heartbeatInterval: Duration { heartbeat }

    /// Finishes the dispatch in hand, then says goodbye and stops.
    func beginShutdown() {
        stopping = true
        if current == nil { sayGoodbye() }
    }

    private func sayGoodbye() {
        guard phase != .stopped else { return }
        if phase != .joining { send(.goodbye(.init(reason: "shutting down"))) }
        stop(nil)
    }

    /// The handshake with the coordinator failed: this worker cannot join as configured.
    func refuse(_ reason: String) {
        guard phase != .stopped else { return }
        logger.error("cannot join: \(reason)")
        stop(BusError(code: .refused, message: reason))
    }

    private func stop(_ error: BusError?) {
        phase = .stopped
        onStop(error)
    }

    private func send(_ message: Message) {
        do {
            _ = try dealer.send(codec.encode(message), nonBlocking: true)
        } catch {
            logger.warning("cannot send \(message.command): \(error)")
        }
    }
}
