import Flux
import FluxBusProtocol
import Logging

/// The coordinator's state and rules, as a state machine with no I/O.
///
/// Inputs go in (``handle(_:at:)``: a peer's message, the end of a burst of them, a timer tick, a shutdown request),
/// each with the time it happened at; effects come out (``takeEffects()``: send to a peer, publish, a failed log).
/// It reads no clock and owns no socket. Its log is a ``LogStorage`` port: SQLite in the ``Coordinator`` shell, a
/// simulated disk in the simulation tests. The shell runs it on one thread, one input to the end before the next.
///
/// The state read per action skips Swift's dynamic exclusivity checks in release builds (`#if !DEBUG
/// @exclusivity(unchecked)`): about 45 checks per batched action, each a runtime call and a thread-local access set,
/// were 11% of the coordinator's instructions. Debug builds, which run the tests and the simulator, keep them.
final class CoordinatorEngine {
    let configuration: CoordinatorConfiguration
    let epoch: UInt64
    let advertisedPublishEndpoint: String
    /// The first control endpoint bound, with a wildcard port resolved.
    let routerEndpoint: String
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    var logger: Logger
    /// Whether each completed dispatch is logged (at debug): asked once, where asking the logger per completion cost
    /// about 200 instructions, a batch's thousand times.
    let logsDispatches: Bool
    let codec: Codec

    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    var membership: Membership
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    var workerByRoutingID = RoutingTable()
    /// Who holds each worker id, and the other processes claiming one.
    var idClaims = WorkerIDClaims()
    /// The peer address of the message being handled, where the transport gives one.
    var peerAddress: String?
    /// The requests waiting behind the one in flight.
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    var queue: RequestQueue
    /// The request in flight and its dispatches.
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    var flights = FlightTable()
    /// The last sequence logged, the last published, and the last completed.
    var lastLogged: UInt64
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    var lastSequence: UInt64
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    var lastCompleted: UInt64
    let log: any LogStorage
    /// Results completed since the log was last flushed, so that a retry arriving meanwhile finds its result.
    var unflushedResults: [String: LoggedRequest] = [:]
    /// After a restart: the stores of the previous run that have no live replica yet, and until when dispatching
    /// waits for them.
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    var recovery: (stores: Set<String>, until: MonotonicTime)?
    /// The snapshot round under way: query id → store, and when it gives up.
    var snapshotRounds: SnapshotRounds
    /// Outcomes stores wait for, logged and not yet committed: their RELEASEs go out after the next flush.
    var undeliveredDecisions: [(sequence: UInt64, store: String)] = []
    /// Outcomes decided before a restart for the actions dispatched again, by sequence.
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    var recoveredDecisions: [UInt64: [StoreOutput]]
    /// Answered requests with outcomes not known yet, which a late report fills in.
    var unknownOutcomes = UnknownOutcomes()
    /// Handler crashes reported in HELLOs, toward marking an action poisoned.
    var handlerCrashes = HandlerCrashes()
    /// Set when the log cannot be written; the shell then stops the coordinator.
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    var storageFailed = false
    /// The log committed actions that are published before the disk syncs them: until ``syncLog()``, nothing else
    /// goes out.
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    var syncOwed = false
    #if DEBUG
    /// A bug planted by the simulation tests, to show they catch it; nil everywhere else.
    var plantedBug: PlantedBug?
    #endif
    /// The time of the input being handled: the engine's only notion of now.
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    private(set) var now: MonotonicTime
    /// The shell's clock, read only for a traced request (to time its log commits and sends); nil in the simulator,
    /// where those take no time.
    var clock: (() -> MonotonicTime)?
    /// Traced requests logged and not yet committed: the next commit is theirs.
    var tracesAwaitingCommit: [RequestTrace] = []
    /// The last commit timed for a traced request: the one a RELEASE sent right after it waited for.
    var lastTimedCommit: ClosedRange<MonotonicTime>?
    /// Effects produced since the shell last took them, besides the messages in ``outbox``.
    private var pendingEffects: [CoordinatorEffect] = []
    /// What goes out before the log's sync (``releaseAheadOfSync()``), ending with `.syncLog`.
    private var effectsAheadOfSync: [CoordinatorEffect] = []
    var stateQueries = StateQueries()
    /// Snapshots arriving in chunks for the round under way.
    var snapshotReceipts = SnapshotReceipts()
    /// Where a message goes: the PUB stream, or one peer on the ROUTER.
    enum Destination: Hashable {
        case stream
        case peer([UInt8])
    }
    /// What is sent while a burst of input is handled goes out together at its end.
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    var outbox = Outbox<Destination>()
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    var lastPublishAt: MonotonicTime
    /// COMPLETEDs waiting for the next publication (``CoordinatorConfiguration/completedWindow``).
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    var heldCompletions = HeldCompletions()
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    var isShuttingDown = false
    /// Malformed input, refusals, strangers and quarantine.
    var policing: PeerPolicing
    /// The shell's look at each message before it is held for sending (and perhaps bundled): it counts completions
    /// and answers for its metrics and fills in STATUS's figures, which it measures. Nil in the simulator.
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    var outgoing: ((inout Message) -> Void)?

    /// - Parameters:
    ///   - recovered: what `log` held when it was opened.
    ///   - now: the time the engine starts at.
    init(
        configuration: CoordinatorConfiguration, epoch: UInt64, log: any LogStorage, recovered: LogRecovery,
        controlEndpoint: String, advertisedPublishEndpoint: String, logger: Logger, now: MonotonicTime
    ) {
        self.routerEndpoint = controlEndpoint
        self.configuration = configuration
        self.epoch = epoch
        self.now = now
        snapshotRounds = SnapshotRounds(retain: configuration.retain, now: now)
        lastPublishAt = now
        policing = PeerPolicing(
            maxMalformedPerSecond: configuration.maxMalformedPerSecond, quarantine: configuration.quarantine,
            rejectInterval: Self.deadline(configuration), now: now)
        self.advertisedPublishEndpoint = advertisedPublishEndpoint
        self.logger = logger
        self.logger[metadataKey: "epoch"] = "\(epoch)"
        logsDispatches = logger.logLevel <= .debug
        self.codec = Codec(limits: configuration.limits)
        self.membership = Membership(topology: configuration.topology)
        self.log = log
        queue = RequestQueue(limit: configuration.queueLimit)
        lastLogged = recovered.lastSequence
        lastSequence = recovered.lastCompleted
        lastCompleted = recovered.lastCompleted
        recoveredDecisions = recovered.decisions
        // Actions logged and not completed run again, in order, under this epoch and with their sequences. A worker
        // that applied one before the restart acknowledges it again without applying it.
        for pending in recovered.pending {
            queue.push(RequestQueue.Entry(
                sequence: pending.sequence, requesters: [], requestID: pending.requestID, actions: pending.actions,
                isBatch: pending.batchSize > 0, batchFirst: pending.batchFirst ?? pending.sequence,
                batchSize: max(pending.batchSize, 1), plans: recovered.plans[pending.batchFirst ?? pending.sequence],
                fingerprint: pending.fingerprint))
        }
        if !recovered.stores.isEmpty {
            recovery = (Set(recovered.stores), now.advanced(by: configuration.recoveryGrace))
        }
        log.beginEpoch(epoch)
        rememberPreviousRun(recovered.declarations)
    }

    /// How long a peer may stay silent before it is written off.
    var deadline: Duration { Self.deadline(configuration) }

    private static func deadline(_ configuration: CoordinatorConfiguration) -> Duration {
        configuration.heartbeatInterval * configuration.livenessIntervals
    }

    // MARK: - Input

    /// Handles one input at `now`. What it causes waits in ``takeEffects()``.
    func handle(_ input: CoordinatorInput, at now: MonotonicTime) {
        let gap = now - self.now
        self.now = max(self.now, now)
        // Ticks come every few dozen milliseconds: a longer gap means this process did not run (SIGSTOP, a VM pause,
        // a stalled disk). Its peers were not silent meanwhile, so their silence counts from now.
        if gap > configuration.heartbeatInterval { resumeAfterStall(gap) }
        switch input {
        case .message(let frames, let userID, let peerAddress): handle(frames, userID: userID, peerAddress: peerAddress)
        case .burstEnd: pump()
        case .tick: tick()
        case .completedWindowEnded: endCompletedWindow()
        case .shutdown:
            isShuttingDown = true
            releaseHeldCompletions()
        }
    }

    /// What the inputs since the last call caused, in order: what went out ahead of a log sync, then messages (a
    /// destination's several as BUNDLEs), then anything else.
    func takeEffects() -> [CoordinatorEffect] {
        var effects = releaseOutbox()
        if !effectsAheadOfSync.isEmpty {
            // Only when a dispatch started in this pass with its sync owed is the outbox's array copied behind them.
            effects = effectsAheadOfSync + effects
            effectsAheadOfSync.removeAll()
        }
        effects += pendingEffects
        pendingEffects.removeAll()
        return effects
    }

    /// Everything held so far goes out now, then the log's sync; what is held after it waits for the disk.
    func releaseAheadOfSync() {
        effectsAheadOfSync += releaseOutbox()
        #if DEBUG
        if plantedBug == .coordinatorAnswersBeforeTheSync { return }
        #endif
        effectsAheadOfSync.append(.syncLog)
    }

    /// The log failed: nothing held behind a sync goes out, since it may tell of actions the disk does not hold, and
    /// the ERRORs and the stop that follow (``stopOnStorageFailure(_:because:)``) are not held behind a sync that
    /// will not run. Everything from the first sync of this pass on is dropped: requests that overlap start several
    /// in one pass, each with its sync, and a shell stops performing at a sync that finds the log failed, so one left
    /// there would swallow the stop and leave a coordinator running that refuses everything (simulator seed 107).
    func abandonOwedSync() {
        if let firstSync = effectsAheadOfSync.firstIndex(where: { if case .syncLog = $0 { true } else { false } }) {
            effectsAheadOfSync.removeSubrange(firstSync...)
        }
        guard syncOwed else { return }
        outbox = Outbox()
        syncOwed = false
    }

    private func releaseOutbox() -> [CoordinatorEffect] {
        outbox.release(codec: codec) { destination, message in
            switch destination {
            case .stream: .publish(message)
            case .peer(let routingID): .send(message, to: routingID)
            }
        }
    }

    /// The time now, for a traced request's figures: the clock when the shell gave one, else the input's time.
    func clockNow() -> MonotonicTime { clock.map { max(now, $0()) } ?? now }

    // MARK: - Output

    // Messages are consumed on their way to the outbox: each copy of one would retain and release all its fields.
    func send(_ message: consuming Message, to routingID: [UInt8]) {
        guard let outgoing else { return outbox.hold(message, for: .peer(routingID)) }
        outgoing(&message)
        outbox.hold(message, for: .peer(routingID))
    }

    func send(_ message: consuming Message, toWorker workerID: String) {
        guard let routingID = membership.workers[workerID]?.routingID else { return }
        send(message, to: routingID)
    }

    /// The log cannot be written: the shell stops the coordinator.
    func reportStorageFailure(_ failure: BusError) {
        pendingEffects.append(.storageFailed(failure))
    }

    // MARK: - Shutdown

    /// Whether nothing is in flight or queued.
    var isIdle: Bool { flights.isIdle && queue.isEmpty }
}
