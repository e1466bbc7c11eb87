import Flux
import FluxBusProtocol
import Logging

/// A worker's state and rules, as a state machine with no I/O.
///
/// Inputs go in (``handle(_:at:)``: a message from the coordinator, a timer, a stop), each with the time it happened
/// at; effects come out (``takeEffects()``: send to the coordinator, subscribe to the stream, write the checkpoint,
/// report an event, stop). Store handlers run inside it, so a handler that hangs also stops the heartbeats, and the
/// coordinator notices (liveness comes from application messages). The ``Worker`` shell owns the sockets, the
/// checkpoint file and the clock.
final class WorkerEngine {
    enum Phase { case joining, catchingUp, live, stopped }

    let id: String
    /// This run of the worker, told apart from earlier runs under the same id.
    let instance: UInt64
    let stores: [AnyStore]
    let storesByName: [String: AnyStore]
    let codec: Codec
    var logger: Logger
    /// The publish endpoint subscribed to, once a WELCOME named it.
    var subscribedEndpoint: String?
    #if DEBUG
    /// A bug planted by the simulation tests, to show they catch it; nil everywhere else.
    var plantedBug: PlantedBug?
    #endif
    /// The time of the input being handled: the engine's only notion of now.
    private(set) var now: MonotonicTime
    /// Effects produced since the shell last took them, besides the messages in ``outbox``.
    private var pendingEffects: [WorkerEffect] = []

    var phase = Phase.joining
    var epoch: UInt64 = 0
    var lastApplied: UInt64
    /// The newest sequence the coordinator has told us about, and the newest it told us completed.
    var knownSequence: UInt64 = 0
    var knownCompleted: UInt64 = 0
    /// Whether a message of the current epoch arrived on SUB, proving the subscription works.
    var heardOnSubscriber = false
    var current: LocalDispatch?
    var pendingActions: [UInt64: Message.Action] = [:]
    var pendingReleases: [UInt64: [StoreOutput]] = [:]
    var ackMemory: [UInt64: [StoreResult]] = [:]
    var ackMemoryOrder = FIFO<UInt64>()
    /// Store → the sequence a SNAPSHOT brought it to, while that is beyond `lastApplied`: the store does not run
    /// those sequences again (see `WorkerEngine+Snapshot.swift`).
    var appliedThrough: [String: UInt64] = [:]
    /// SNAPSHOTs that arrived before their WELCOME, by store; installed when a WELCOME of their epoch arrives.
    var heldSnapshots: [String: Message.Snapshot] = [:]
    /// Each store's state when the worker started (before any checkpoint), which an empty SNAPSHOT restores.
    var initialStates: [String: [UInt8]] = [:]
    /// Where the checkpoint goes, if the worker keeps one, and whether anything changed since it was written.
    var keepsCheckpoint = false
    var checkpointStale = false
    let ackMemoryLimit = 4_096
    /// ACTIONs kept while an earlier one is missing; past this, later ones are dropped and fetched when their turn
    /// comes, so a flood cannot grow the worker without bound.
    let pendingActionLimit = 10_000
    var heartbeat: Duration
    var deadline: Duration
    var lastHeard: MonotonicTime
    var lastHelloAt: MonotonicTime?
    var fetchSentAt: MonotonicTime?
    /// The end of the range the last FETCH asked for: its REPLAYs may still be arriving until one reaches it.
    var fetchingThrough: UInt64 = 0
    var stopping = false
    var malformedCount = 0
    /// What is sent while a burst of input is handled goes out together at its end (one destination: the DEALER).
    var outbox = Outbox<Int>()

    /// - Parameters:
    ///   - instance: a number that differs between runs of the same worker (the shell draws it at random).
    ///   - now: the time the engine starts at.
    init(
        id: String, instance: UInt64, stores: [AnyStore], lastApplied: UInt64 = 0, heartbeat: Duration, logger: Logger,
        now: MonotonicTime
    ) {
        self.id = id
        self.instance = instance
        self.now = now
        self.lastHeard = now
        self.stores = stores
        self.storesByName = Dictionary(uniqueKeysWithValues: stores.map { ($0.name, $0) })
        self.lastApplied = lastApplied
        self.heartbeat = heartbeat
        self.deadline = heartbeat * BusDefaults.livenessIntervals
        self.codec = Codec()
        self.logger = logger
        self.logger[metadataKey: "worker"] = "\(id)"
        outbox.hold()
        for store in stores { initialStates[store.name] = try? store.encodedState() }
    }

    // MARK: - Joining

    func sayHello() {
        phase = .joining
        lastHelloAt = now
        let declarations = stores.map { store in
            StoreDeclaration(
                name: store.name, dependsOn: store.dependencies, handlesAll: store.handlesAllActions,
                handles: store.actionNames, lastApplied: lastApplied)
        }
        send(.hello(.init(workerID: id, instance: instance, stores: declarations)))
    }

    func welcomed(_ welcome: Message.Welcome) {
        // No check that `welcome.sequence >= lastApplied`: with a durable log the coordinator refuses a HELLO beyond
        // its history, and the dispatch in flight when it stopped comes again under the new epoch with the same
        // sequence, so a worker may legitimately be one (or more) ahead; it re-acknowledges what it applied.
        let restarted = epoch != 0 && epoch != welcome.epoch
        if restarted {
            logger.notice("coordinator restarted; rejoined under a new epoch", metadata: ["epoch": "\(welcome.epoch)"])
            // What the previous run announced may never have been logged as completed: the new run's word counts.
            knownSequence = welcome.sequence
            knownCompleted = welcome.sequence
        }
        epoch = welcome.epoch
        logger[metadataKey: "epoch"] = "\(epoch)"
        heartbeat = .milliseconds(Int64(max(welcome.heartbeatMillis, 10)))
        deadline = .milliseconds(Int64(max(welcome.deadlineMillis, 40)))
        knownSequence = max(knownSequence, welcome.sequence)
        knownCompleted = max(knownCompleted, welcome.sequence)
        heardOnSubscriber = false
        phase = .catchingUp
        installSnapshotsHeld(for: welcome.epoch)
        subscribe(to: welcome.publishEndpoint)
        emit(.welcomed(epoch: epoch, sequence: welcome.sequence))
        logger.info("welcomed, catching up", metadata: ["seq": "\(lastApplied)", "target": "\(welcome.sequence)"])
        catchUp()
    }

    /// Subscribes to the stream at `endpoint`, unless already subscribed there.
    func subscribe(to endpoint: String) {
        if subscribedEndpoint == endpoint { return }
        subscribedEndpoint = endpoint
        pendingEffects.append(.subscribe(endpoint))
    }

    /// Sends READY once caught up, with a working subscription and nothing in hand.
    func readyIfCaughtUp() {
        guard phase == .catchingUp, heardOnSubscriber, current == nil, lastApplied >= knownSequence else { return }
        phase = .live
        send(.ready(.init(epoch: epoch, lastApplied: lastApplied)))
        emit(.live(sequence: lastApplied))
        logger.info("live", metadata: ["seq": "\(lastApplied)"])
    }

    /// Fetches what the coordinator has that we lack. A dispatch in hand that the coordinator has moved past (or
    /// reported completed) completed without us: fetch it too, to settle it from the record.
    func catchUp() {
        // The dispatch in hand completed without us when the coordinator says so; or, probably, when later ones were
        // published and it has waited a while (a batch's actions are published together, so not at once).
        if let current, knownCompleted >= current.sequence
            || (knownSequence > current.sequence && now - current.begunAt > heartbeat)
        {
            requestFetch(from: current.sequence, to: min(max(knownSequence, current.sequence), current.sequence + Self.fetchWindow))
        } else if current == nil, knownSequence > lastApplied {
            requestFetch(from: lastApplied + 1, to: min(knownSequence, lastApplied + Self.fetchWindow))
        }
        readyIfCaughtUp()
    }

    /// At most this many sequences per FETCH. The coordinator answers the whole range at once, in several REPLAYs, so
    /// a replica catching up waits one round trip per window instead of one per REPLAY.
    static let fetchWindow: UInt64 = 8_192

    func requestFetch(from: UInt64, to: UInt64) {
        if let sent = fetchSentAt, now - sent < .seconds(1) { return }
        fetchSentAt = now
        fetchingThrough = to
        send(.fetch(.init(epoch: epoch, from: from, to: to)))
    }

    // MARK: - Input

    /// Handles one input at `now`. What it causes waits in ``takeEffects()``.
    func handle(_ input: WorkerInput, at now: MonotonicTime) {
        self.now = max(self.now, now)
        switch input {
        case .start: sayHello()
        case .message(let frames, let fromSubscriber): receive(frames, fromSubscriber: fromSubscriber)
        case .tick: tick()
        case .checkpointDue: writeCheckpointIfStale()
        case .shutdown: beginShutdown()
        case .shutdownOverdue(let reason): stopNow(reason: reason)
        case .handshakeFailed(let reason): refuse(reason)
        }
    }

    /// What the inputs since the last call caused: events, the subscription and the checkpoint first (a store's
    /// `applied` is journaled before its ACK can leave), then messages to the coordinator (several as BUNDLEs), then
    /// the stop, if the worker stopped.
    func takeEffects() -> [WorkerEffect] {
        var effects: [WorkerEffect] = []
        var stop: WorkerEffect?
        for effect in pendingEffects {
            if case .stop = effect { stop = effect } else { effects.append(effect) }
        }
        pendingEffects.removeAll()
        effects += outbox.release(codec: codec).map { WorkerEffect.send($0.message) }
        outbox.hold()
        if let stop { effects.append(stop) }
        return effects
    }

    /// Messages held for the coordinator so far: the shell sends a long burst's in parts.
    var heldMessages: Int { outbox.count }

    private func receive(_ frames: [[UInt8]], fromSubscriber: Bool) {
        guard phase != .stopped else { return }
        let messages: [Message]
        do {
            messages = try codec.decodeAll(frames)
        } catch {
            malformedCount += 1
            logger.warning("dropped a malformed message", metadata: ["reason": "\(error)", "total": "\(malformedCount)"])
            return
        }
        lastHeard = now
        for message in messages {
            handle(message, fromSubscriber: fromSubscriber)
            if phase == .stopped { return }
        }
    }

    func emit(_ event: WorkerEvent) { pendingEffects.append(.event(event)) }

    func pendingCheckpoint(_ checkpoint: Checkpoint) { pendingEffects.append(.writeCheckpoint(checkpoint)) }

    func pendingStop(_ error: BusError?) { pendingEffects.append(.stop(error)) }

    func handle(_ message: Message, fromSubscriber: Bool) {
        switch message {
        case .welcome(let welcome):
            welcomed(welcome)
        case .reject(let reject):
            emit(.rejected(code: reject.code, reason: reject.reason))
            logger.error("the coordinator refused this worker", metadata: ["code": "\(reject.code)", "reason": "\(reject.reason)"])
            stop(BusError(code: .refused, message: "the coordinator refused worker `\(id)`: \(reject.reason)"))
        case .goodbye(let goodbye):
            // Already joining: the HELLO is on its way, and every heartbeat queued while the coordinator was away
            // earns a GOODBYE of its own; answering each with another HELLO would rejoin over and over.
            guard phase != .joining else { return }
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
            emit(.cascadeRefused(requestID: error.requestID, code: error.code, message: error.message))
            logger.warning("the coordinator refused a dispatch from a handler", metadata: [
                "request": "\(error.requestID)", "code": "\(error.code)", "message": "\(error.message)",
            ])
        case .result:
            break
        case .snapshot(let snapshot):
            receive(snapshot)
        case .hello, .ready, .ack, .fetch, .dispatch, .dispatchBatch, .statusRequest, .status, .graphRequest, .graph, .state,
            .batchResult, .bundle:
            malformedCount += 1
            logger.warning("dropped \(message.command), which a coordinator never sends to a worker")
        }
    }

    /// Whether a message belongs to the epoch we joined. A newer epoch on the stream means the coordinator
    /// restarted: join it again.
    func isCurrentEpoch(_ messageEpoch: UInt64, fromSubscriber: Bool) -> Bool {
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

    func send(_ message: Message) {
        _ = outbox.hold(message, for: 0)
    }
}
