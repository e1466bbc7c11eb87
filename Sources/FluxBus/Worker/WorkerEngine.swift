import Flux
import FluxBusProtocol
import Logging

/// A worker's state and rules, as a state machine with no I/O.
///
/// Inputs go in (``handle(_:at:)``: a message from the coordinator, a timer, a stop), each with the time it happened
/// at; effects come out (``takeEffects()``: send to the coordinator, subscribe to the stream, write the checkpoint,
/// report an event, stop). Store handlers run inside it, so while one runs the engine cannot tick: the shell's
/// ``LivenessGuard`` heartbeats for it, and when it comes back it does not count that pause as the coordinator's
/// silence. The ``Worker`` shell owns the sockets, the checkpoint file and the clock.
///
/// The engine composes owners, each with its own state and rules: ``CoordinatorSession`` (joining, epoch,
/// liveness), ``CatchUp`` (what is missing, and the FETCHes for it), ``EarlyArrivals`` (ACTIONs and RELEASEs ahead
/// of their turn), ``AckMemory`` (results to re-acknowledge), ``SnapshotProgress`` (how far snapshots brought each
/// store) and ``LocalDispatch`` (the dispatch in hand). What stays here is the applied sequence, which they all read.
///
/// As in ``CoordinatorEngine``, the state read per action skips the dynamic exclusivity checks in release builds
/// only: they were 13% of a batched action's instructions here.
final class WorkerEngine {
    enum Phase { case joining, catchingUp, live, stopped }

    let id: String
    /// This run of the worker, told apart from earlier runs under the same id.
    let instance: UInt64
    /// The hosted stores, found by name, in the worker's order.
    let storesByName: StoreDirectory
    /// The hosted stores in the worker's order: a store's position is its index here.
    var stores: [AnyStore] { storesByName.all }
    let codec: Codec
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    var logger: Logger
    #if DEBUG
    /// A bug planted by the simulation tests, to show they catch it; nil everywhere else.
    var plantedBug: PlantedBug? {
        didSet { plans.ignoresWhatRunsHere = plantedBug == .workerReusesAStalePlan }
    }
    #endif
    /// The time of the input being handled: the engine's only notion of now.
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    private(set) var now: MonotonicTime
    /// The shell's clock, read only while a traced dispatch runs (to time its stores); nil in the simulator, where a
    /// traced store takes no time.
    var clock: (() -> MonotonicTime)?
    /// Effects produced since the shell last took them, besides the messages in ``outbox``.
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    private var pendingEffects: [WorkerEffect] = []
    /// What is sent while a burst of input is handled goes out together at its end (one destination: the DEALER).
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    private var outbox = Outbox<Int>()

    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    var session: CoordinatorSession
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    var catchUp = CatchUp()
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    var earlyArrivals = EarlyArrivals()
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    var acknowledged = AckMemory()
    var snapshots: SnapshotProgress
    /// STATEs being encoded or PULLed from this worker.
    var outbound = StateTransfers()
    /// SNAPSHOTs arriving in chunks.
    var downloads = SnapshotDownloads()
    /// The bytes a STATE carries inline and a PULL asks for (the shell sets it; the simulator makes it tiny).
    var transferChunkBytes = TransferWindow.defaultChunkSize
    /// The last sequence every hosted store has applied (or a snapshot brought past).
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    var lastApplied: UInt64
    /// Each hosted store's latest result and the sequence it ran in, reported with a fresh digest when the worker
    /// goes live: a replica that caught up by replaying has sent no digest yet.
    /// By store position (``storesByName``).
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    var lastRuns: [(sequence: UInt64, result: StoreResult)?]
    /// The log chain at ``lastApplied``, computed from every dispatch applied since sequence 1 (docs/PROTOCOL.md,
    /// appendix D); nil once a snapshot replaced part of that history. HELLO reports it.
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    var chain: UInt64? = 0
    /// The epoch of the coordinator that sent the entry at ``lastApplied``; 0 when unknown. HELLO reports it, so that
    /// a log that lost that entry and logged another at its sequence in a later epoch tells the two apart even when
    /// they read the same (a power cut while the log synced; docs/PROTOCOL.md, HELLO).
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    var appliedEpoch: UInt64 = 0
    /// Runs an async handler to its end (the shell's ``AwaitedHandler``); nil, as in the simulator, fails such a
    /// handler's store with `StoreError.asyncHandler`.
    var awaitHandler: ((AnyStore, AnyAction, DispatchContext) throws -> Bool)?
    /// Armed around every handler, so that a process a handler kills leaves word of it; nil keeps none.
    var crashMarker: (any HandlerCrashMarking)?
    /// The handler the previous process of this worker died in, reported in every HELLO of this one.
    var previousCrash: HandlerCrash?
    /// Stores marked poisoned at a sequence (by the REPLAYs that carried the marks), until that sequence is applied.
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    var poisoned = PoisonedSkips()
    /// Where the running handler's cascades go.
    private(set) lazy var cascadeOrigin = CascadeOrigin(engine: self)
    /// The dispatch in hand: begun, with hosted stores still to run or settle.
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    var current: LocalDispatch?
    /// Whether a dispatch is in hand. Asked of its sequence: `current == nil` went through the generic `Optional`,
    /// which copied the whole dispatch to test it, once per action.
    var isIdle: Bool { current?.sequence == nil }
    /// The last plan prepared for a dispatch, reused by the next one with the same plan.
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    var plans = PlanCache()
    /// What this process has said of its stores' histories (``WorkerEngine/noteHistory(sequence:plan:outputs:)``).
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    var histories = HistoryNotes()
    /// Whether the worker keeps a checkpoint (the shell sets it), and whether anything changed since it was written.
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    var keepsCheckpoint = false
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    var checkpointStale = false
    /// Whether anything reads an ``WorkerEvent/applied(sequence:store:status:)`` event (the shell sets it): a journal,
    /// metrics or a reader of ``Worker/events``. Nothing else does, and one per store per action made a catching-up
    /// replica run about 12% more instructions when nobody read it.
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    var reportsApplied = true
    /// A graceful stop began: say goodbye once the dispatch in hand finishes.
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    var stopping = false
    var malformedCount = 0

    var phase: Phase { session.phase }
    var epoch: UInt64 { session.epoch }
    var heartbeatInterval: Duration { session.heartbeat }

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
        self.storesByName = StoreDirectory(stores)
        self.lastRuns = Array(repeating: nil, count: stores.count)
        self.lastApplied = lastApplied
        self.session = CoordinatorSession(heartbeat: heartbeat, now: now)
        self.snapshots = SnapshotProgress(stores: stores)
        self.codec = Codec()
        self.logger = logger
        self.logger[metadataKey: "worker"] = "\(id)"
    }

    // MARK: - Input

    /// Handles one input at `now`. What it causes waits in ``takeEffects()``.
    func handle(_ input: WorkerInput, at now: MonotonicTime) {
        let gap = now - self.now
        self.now = max(self.now, now)
        // The tick comes every heartbeat interval: a gap of more than two means this engine did not run meanwhile (a
        // long handler, a pause). The coordinator may well have spoken; its silence counts from now.
        if gap > heartbeatInterval * 2 { resumeAfterPause(gap) }
        switch input {
        case .start: sayHello()
        case .message(let frames, let fromSubscriber): receive(frames, fromSubscriber: fromSubscriber)
        case .tick: tick()
        case .checkpointDue: writeCheckpointIfStale()
        case .shutdown: beginShutdown()
        case .shutdownOverdue(let reason): stopNow(reason: reason)
        case .handshakeFailed(let reason): refuse(reason)
        case .stateEncoded(let requestID, let result): stateEncoded(requestID, result)
        }
    }

    /// Restarts the coordinator's silence, which this engine could not watch while it did not run, from now.
    private func resumeAfterPause(_ gap: Duration) {
        guard phase == .catchingUp || phase == .live else { return }
        logger.notice("this worker did not run for a while; the coordinator's silence counts from now", metadata: [
            "pausedMillis": "\(gap.milliseconds)",
        ])
        session.forgiveSilence(until: now)
    }

    /// What the inputs since the last call caused: events, the subscription and the checkpoint first (a store's
    /// `applied` is journaled before its ACK can leave), then messages to the coordinator (several as BUNDLEs), then
    /// the stop, if the worker stopped.
    func takeEffects() -> [WorkerEffect] {
        var effects: [WorkerEffect] = []
        effects.reserveCapacity(pendingEffects.count + outbox.count)  // at most one effect per message held
        var stop: WorkerEffect?
        for effect in pendingEffects {
            if case .stop = effect { stop = effect } else { effects.append(effect) }
        }
        pendingEffects.removeAll()
        flushesEarly = false
        effects += outbox.release(codec: codec) { _, message in WorkerEffect.send(message) }
        #if DEBUG
        if plantedBug == .workerMisstatesDigestsInRuns {
            effects = effects.map { if case .send(let message) = $0 { .send(Self.misstatingRunDigests(message)) } else { $0 } }
        }
        #endif
        if let stop { effects.append(stop) }
        return effects
    }

    #if DEBUG
    /// ``PlantedBug/workerMisstatesDigestsInRuns``: the first digest of an ACKS run, a BUNDLE's too, off by one.
    private static func misstatingRunDigests(_ message: Message) -> Message {
        switch message {
        case .acks(var run) where run.digests.count >= 8:
            run.digests[7] &+= 1
            return .acks(run)
        case .bundle:
            let codec = Codec()
            guard let parts = try? codec.decodeAll(codec.encode(message), keepingAcks: true) else { return message }
            return .bundle(Message.Bundle(messages: parts.map { BundledMessage(body: codec.encodeBody(misstatingRunDigests($0))) }))
        default: return message
        }
    }
    #endif

    /// Messages held for the coordinator so far: the shell sends a long burst's in parts.
    var heldMessages: Int { outbox.count }
    /// Something held must not wait for the rest of the burst (a FETCH sent ahead, which the coordinator answers while
    /// this worker applies the burst): the shell sends what is held now.
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    var flushesEarly = false

    /// The time now, for a traced dispatch's figures: the clock when the shell gave one, else the input's time.
    func clockNow() -> MonotonicTime { clock.map { max(now, $0()) } ?? now }

    // MARK: - Effects

    func send(_ message: consuming Message) {
        outbox.hold(message, for: 0)
    }

    func emit(_ event: WorkerEvent) { pendingEffects.append(.event(event)) }

    func pendingSubscription(_ endpoint: String) { pendingEffects.append(.subscribe(endpoint)) }

    func pendingCheckpoint(_ checkpoint: CheckpointDraft) { pendingEffects.append(.writeCheckpoint(checkpoint)) }

    func pendingStop(_ error: BusError?) { pendingEffects.append(.stop(error)) }

    func pendingEncode(_ requestID: String, _ copy: StoreStateCopy) { pendingEffects.append(.encodeState(requestID: requestID, copy)) }
}
