import Flux
@testable import FluxBus
import FluxBusProtocol
import Logging

/// One coordinator engine, three worker engines and a few clients in one thread, under a seeded network, clock and
/// disk. Every step handles one event; the ``SimChecker`` checks the invariants after each.
final class SimCluster {
    enum Event {
        case toCoordinator([[UInt8]], link: Link)
        case toWorker(Int, [[UInt8]], fromSubscriber: Bool, generation: Int)
        case toClient(Int, [[UInt8]], generation: Int)
        case coordinatorTick(incarnation: Int)
        case coordinatorRestart
        case workerTick(Int, incarnation: Int)
        case workerCheckpoint(Int, incarnation: Int)
        case workerRestart(Int)
        /// A state a worker's engine asked to have encoded, encoded off its "I/O thread" after a delay.
        case workerEncoded(Int, incarnation: Int, requestID: String, Result<EncodedState, BusError>)
        case subscriptionUp(Int, incarnation: Int)
        case healPartition(Int)
        case clientWake(Int)
        case toReader([[UInt8]], generation: Int)
        case readerWake
        case chaos
        /// The guard of a worker busy in a handler heartbeats for it; it says GOODBYE for it on a stop.
        case guardBeat(Int, incarnation: Int)
        case abandon(Int, incarnation: Int)
        /// A fault that strikes the coordinator while its log's sync hangs.
        case duringSync(SyncFault, incarnation: Int)
    }

    /// Who sent a message to the coordinator, and the connection's generation when it was sent: a message sent over
    /// a connection that has since broken (a crash, a partition) is lost.
    /// `leaving`: a worker's GOODBYE sent as it exits, which arrives although the process is gone.
    enum Link { case worker(Int, generation: Int), client(Int, generation: Int), reader(generation: Int), leaving }

    struct WorkerNode {
        let id: String
        let stores: [any Store.Type]
        var engine: WorkerEngine?
        var incarnation = 0
        var generation = 0
        var subscribed = false
        var subscriptionReady = false
        var partitioned = false
        var stalledUntil: Int64 = 0
        /// Until when it is busy in a handler (also ``stalledUntil``), its guard heartbeating for it.
        var busyUntil: Int64 = 0
        var checkpoint: Checkpoint?
        /// The crash marker of its running process, when ledger handlers trap; the crash it last died of, for its
        /// next HELLO.
        var crashMarker: SimCrashMarker?
        var lastCrash: HandlerCrash?
        var routingID: [UInt8] { Array(id.utf8) }
    }

    let seed: UInt64
    var random: SplitMix64
    /// Draws for log damage only, so that a seed's other faults stay as they were without it.
    var damageRandom: SplitMix64
    /// Draws for busy handlers only, for the same reason.
    var busyRandom: SplitMix64
    /// Draws for ``FaultPlan/crashDuringSync``.
    var syncRandom: SplitMix64
    /// The log as it was before a damage fault, for the operator's restore after the refusal.
    var damagedLogBackup: MemoryLogTables?
    /// How often a restarted coordinator refused its damaged log.
    var logRefusals = 0
    /// Busy handlers injected, and how many of them ended in a stop (the guard's GOODBYE).
    var busyPeriods = 0
    var busyStops = 0
    /// FETCHes workers sent ahead (``CatchUp/fetchAhead(at:)``), counted from the engines that have stopped.
    var fetchesAhead = 0
    /// The ids the ledger's handler traps on (a poison action), and how many processes died of it.
    var ledgerTraps: Set<UInt32> = [] {
        didSet { checker.ledgerTraps(on: trapsOnlyOn == nil ? ledgerTraps : []) }
    }
    /// The workers whose ledger traps, when not all of them do (a crash of one worker's own, its build or its
    /// environment): then the others apply the id, and the model keeps it. Set it before ``ledgerTraps``.
    var trapsOnlyOn: Set<Int>?
    var handlerTraps = 0
    var faults: FaultPlan
    let checker: SimChecker
    private(set) var now: Int64 = 0
    private(set) var steps = 0
    var agenda = EventQueue<Event>()
    let codec = Codec()
    /// Per-connection FIFO: the latest arrival scheduled on each connection, which a later message never overtakes.
    var lastArrival: [Int: Int64] = [:]
    private let logger = Logger(label: "sim", factory: { _ in SwiftLogNoOpLogHandler() })
    /// The coordinator's configuration; an operator's `--new-bus` sets `newBus` for one start.
    var configuration: CoordinatorConfiguration
    let disk = SimulatedDisk()
    var coordinator: CoordinatorEngine?
    var coordinatorIncarnation = 0
    /// Until when the coordinator handles nothing (a stall fault).
    var coordinatorStalledUntil: Int64 = 0
    var workers: [WorkerNode]
    var clients: [SimClient]
    /// Reads the ledger's state through the coordinator now and then, as `fluxbus state` does.
    var reader = SimStateReader()
    /// Whether faults are still injected; ``quiesce()`` ends them.
    private(set) var faultsOn = true
    let mutation: PlantedBug?
    /// Workers kept down on purpose by a scenario: no fault or ``quiesce()`` restarts them.
    var retired: Set<Int> = []
    /// A scenario's trigger: called with what reaches the coordinator; true crashes it instead of delivering.
    var crashesCoordinatorOn: ((SimCluster, [Message]) -> Bool)?
    /// A scenario's fault in the middle of a log sync: called at each sync the coordinator owes, once the ACTIONs
    /// ahead of it went out; nil for none.
    var faultDuringSync: ((SimCluster) -> SyncFault?)?
    /// A scenario's operator, for a coordinator that stopped because a worker applied more than its log holds (a
    /// power cut lost a commit after its ACTION went out): it starts the coordinator once with `--new-bus`, and
    /// restarts each worker that coordinator refuses (REJECT 9) with empty state, as OPERATIONS.md section 9 says.
    var operatorRecoversFromAheadWorkers = false
    /// Workers refused for being ahead of the log, which the operator restarts empty when they stop; and how many
    /// the operator restarted so.
    var refusedAheadOfLog: Set<Int> = []
    var restartedEmptyByOperator = 0
    /// Faults that struck while a log sync hung.
    var syncFaults = 0
    /// Why the coordinator stopped, each time it stopped for its log.
    var storageStops: [String] = []
    /// A scenario's loss: called with each published message and a subscriber; true loses it for that subscriber.
    var losesPublished: ((Message, _ worker: Int) -> Bool)?
    /// A scenario's count: called with each message the coordinator sends one worker directly.
    var watchesDirectSends: ((Message, _ worker: Int) -> Void)?

    init(
        seed: UInt64, faults: FaultPlan? = nil, topology: SimTopology = .remoteDependents, actionsPerClient: Int = 40,
        mutation: PlantedBug? = nil, workersDown: Set<Int> = [], idleClients: Int = 0, heartbeatInterval: Duration = .milliseconds(100),
        ackTimeout: Duration = BusDefaults.ackTimeout
    ) {
        self.seed = seed
        self.mutation = mutation
        random = SplitMix64(seed: seed)
        self.faults = faults ?? FaultPlan.swarm(using: &random)
        damageRandom = SplitMix64(seed: seed ^ 0x10C_DA4A)
        if faults == nil, Bool.random(using: &damageRandom) {
            self.faults.logDamage = Double.random(in: 0.3...1, using: &damageRandom)
        }
        syncRandom = SplitMix64(seed: seed ^ 0x5_1C_FA11)
        if faults == nil, Int.random(in: 0..<3, using: &syncRandom) == 0 {
            self.faults.crashDuringSync = Double.random(in: 0.005...0.05, using: &syncRandom)
        }
        busyRandom = SplitMix64(seed: seed ^ 0xB05E_4A4D)
        if faults == nil, Bool.random(using: &busyRandom) {
            self.faults.busyRate = Double.random(in: 0.05...0.4, using: &busyRandom)
            self.faults.stopWhileBusy = Double.random(in: 0...0.5, using: &busyRandom)
        }
        checker = SimChecker()
        // One run in four has the ledger trap on one id: a poison action among the other faults. Its own draws, so
        // that a seed's other faults stay as they were.
        var poisonRandom = SplitMix64(seed: seed ^ 0x9015_0AC7)
        if faults == nil, Int.random(in: 0..<4, using: &poisonRandom) == 0 {
            ledgerTraps = [UInt32.random(in: 1...60, using: &poisonRandom)]
            checker.ledgerTraps(on: ledgerTraps)
        }
        var configuration = CoordinatorConfiguration(
            controlEndpoint: "sim://control", publishEndpoint: "sim://publish", ackTimeout: ackTimeout,
            heartbeatInterval: heartbeatInterval,
            retain: 30, rememberedRequests: 1_000, replayBatch: 50, tickInterval: .milliseconds(20))
        configuration.recoveryGrace = .seconds(3)
        // Tiny chunks, so that every snapshot and STATE spans many of them and faults land mid-transfer.
        configuration.transferChunkBytes = Self.chunkBytes
        self.configuration = configuration
        workers = topology.stores.enumerated().map { WorkerNode(id: "w\($0.offset + 1)", stores: $0.element) }
        // Idle clients send only what a scenario gives them (``SimClient/adopt(_:at:cluster:)``).
        clients = (0..<3).map { SimClient(index: $0, actions: actionsPerClient) } + (3..<3 + idleClients).map { SimClient(index: $0, actions: 0) }
        checker.cluster = self
        startCoordinator()
        retired = workersDown
        for index in workers.indices where !workersDown.contains(index) { startWorker(index, withCheckpoint: false) }
        for index in clients.indices { agenda.schedule(.clientWake(index), at: Int64(index) * 1_000 + 50_000) }
        agenda.schedule(.chaos, at: 100_000)
        agenda.schedule(.readerWake, at: 1_000_000)
    }

    /// The simulated transfers' chunk size, in bytes: a ledger of 100 ids spans about 30 chunks.
    static let chunkBytes = 16
    /// Sequences per FETCH: small, so that catching up takes many windows, each fetched ahead of the one arriving.
    static let catchUpWindow: UInt64 = 8

    // MARK: - Running

    /// Runs until `limit` microseconds of simulated time, or until the agenda empties.
    func run(until limit: Int64) {
        while let (time, event) = agenda.next() {
            guard time <= limit else {
                agenda.schedule(event, at: time)
                now = limit
                return
            }
            now = time
            steps += 1
            checker.note(self.describe(event))
            handle(event)
            checker.checkAfterStep()
            if checker.violation != nil { return }
        }
    }

    /// Ends every fault: heals partitions, restarts what is down, stops losing messages.
    func quiesce() {
        faultsOn = false
        faults.publishLoss = 0
        faults.flushFailure = 0
        if coordinator == nil { agenda.schedule(.coordinatorRestart, at: now + 1_000) }
        coordinatorStalledUntil = min(coordinatorStalledUntil, now)
        for index in workers.indices {
            workers[index].partitioned = false
            workers[index].stalledUntil = min(workers[index].stalledUntil, now)
            workers[index].busyUntil = min(workers[index].busyUntil, now)
            if workers[index].engine == nil, !retired.contains(index) { agenda.schedule(.workerRestart(index), at: now + 1_000) }
        }
    }

    var isQuiet: Bool { clients.allSatisfy(\.isDone) }

    /// Runs until `condition` holds after a step, or until `limit` microseconds of simulated time; true if it held.
    @discardableResult
    func run(until limit: Int64, stoppingWhen condition: (SimCluster) -> Bool) -> Bool {
        while now < limit, checker.violation == nil {
            run(until: min(now + 10_000, limit))
            if condition(self) { return true }
        }
        return condition(self)
    }

    // MARK: - Events

    private func handle(_ event: Event) {
        switch event {
        case .toCoordinator(let frames, let link):
            guard let coordinator, linkIsUp(link) else { return }
            if postponedByCoordinatorStall(event) { return }
            if let trigger = crashesCoordinatorOn, trigger(self, (try? codec.decodeAll(Array(frames.dropFirst()))) ?? []) {
                crashesCoordinatorOn = nil
                return crashCoordinator()
            }
            coordinator.handle(.message(frames, userID: nil), at: time)
            coordinator.handle(.burstEnd, at: time)
            perform(coordinator.takeEffects())
        case .toWorker(let index, let frames, let fromSubscriber, let generation):
            guard let engine = workers[index].engine, generation == workers[index].generation else { return }
            if postponedByStall(event, worker: index) { return }
            engine.handle(.message(frames, fromSubscriber: fromSubscriber), at: time)
            perform(engine.takeEffects(), worker: index)
        case .toClient(let index, let frames, _):
            var client = clients[index]
            for message in (try? codec.decodeAll(frames)) ?? [] { client.receive(message, at: now, cluster: self) }
            clients[index] = client
        case .coordinatorTick(let incarnation):
            guard let coordinator, incarnation == coordinatorIncarnation else { return }
            if postponedByCoordinatorStall(event) { return }
            coordinator.handle(.tick, at: time)
            perform(coordinator.takeEffects())
            agenda.schedule(.coordinatorTick(incarnation: incarnation), at: now + configuration.tickInterval.microseconds)
        case .coordinatorRestart:
            if coordinator == nil { startCoordinator() }
        case .duringSync(let fault, let incarnation):
            guard coordinator != nil, incarnation == coordinatorIncarnation else { return }
            strike(fault)
        case .workerTick(let index, let incarnation):
            guard let engine = workers[index].engine, incarnation == workers[index].incarnation else { return }
            if postponedByStall(event, worker: index) { return }
            engine.handle(.tick, at: time)
            perform(engine.takeEffects(), worker: index)
            let interval = engine.phase == .joining ? 10_000 : engine.heartbeatInterval.microseconds
            if engine.phase != .stopped { agenda.schedule(event, at: now + interval) }
        case .workerCheckpoint(let index, let incarnation):
            guard let engine = workers[index].engine, incarnation == workers[index].incarnation else { return }
            engine.handle(.checkpointDue, at: time)
            perform(engine.takeEffects(), worker: index)
            agenda.schedule(event, at: now + 1_000_000)
        case .workerEncoded(let index, let incarnation, let requestID, let result):
            guard let engine = workers[index].engine, incarnation == workers[index].incarnation else { return }
            if postponedByStall(event, worker: index) { return }
            engine.handle(.stateEncoded(requestID: requestID, result), at: time)
            perform(engine.takeEffects(), worker: index)
        case .workerRestart(let index):
            if workers[index].engine == nil, !retired.contains(index) {
                startWorker(index, withCheckpoint: Double.random(in: 0..<1, using: &random) < faults.keepsCheckpoint)
            }
        case .subscriptionUp(let index, let incarnation):
            if incarnation == workers[index].incarnation, workers[index].subscribed { workers[index].subscriptionReady = true }
        case .healPartition(let index):
            workers[index].partitioned = false
        case .toReader(let frames, let generation):
            guard generation == reader.generation else { return }
            var reader = self.reader
            for message in (try? codec.decodeAll(frames)) ?? [] { reader.receive(message, at: now, cluster: self) }
            self.reader = reader
        case .readerWake:
            var reader = self.reader
            if faultsOn || !isQuiet { reader.wake(at: now, cluster: self) }
            self.reader = reader
            if faultsOn { agenda.schedule(.readerWake, at: now + 700_000) }
        case .clientWake(let index):
            var client = clients[index]
            client.wake(at: now, cluster: self)
            clients[index] = client
        case .chaos:
            if faultsOn { injectFaults() }
            agenda.schedule(.chaos, at: now + 100_000)
        case .guardBeat(let index, let incarnation):
            beatForBusyWorker(index, incarnation: incarnation)
        case .abandon(let index, let incarnation):
            abandonBusyWorker(index, incarnation: incarnation)
        }
    }

    var time: MonotonicTime { MonotonicTime(nanoseconds: now * 1_000) }

    /// A stalled coordinator handles nothing until the stall ends: its input waits, in order.
    private func postponedByCoordinatorStall(_ event: Event) -> Bool {
        guard coordinatorStalledUntil > now else { return false }
        agenda.schedule(event, at: coordinatorStalledUntil)
        return true
    }

    /// A stalled worker handles nothing until the stall ends: its input waits, in order.
    private func postponedByStall(_ event: Event, worker index: Int) -> Bool {
        guard workers[index].stalledUntil > now else { return false }
        agenda.schedule(event, at: workers[index].stalledUntil)
        return true
    }

    private func linkIsUp(_ link: Link) -> Bool {
        switch link {
        case .worker(let index, let generation):
            workers[index].engine != nil && generation == workers[index].generation && !workers[index].partitioned
        case .client(let index, let generation): generation == clients[index].generation
        case .leaving: true
        case .reader(let generation): generation == reader.generation
        }
    }

    // MARK: - Starting

    func startCoordinator() {
        let log = SimulatedLog(disk: disk) { [unowned self] in
            faults.flushFailure > 0 && Double.random(in: 0..<1, using: &random) < faults.flushFailure
        }
        let recovered: LogRecovery
        do {
            recovered = try log.recover()
        } catch {
            // A damaged log must be refused; the operator then restores it from a backup and starts again.
            guard let backup = damagedLogBackup else { return checker.fail("the log could not be recovered: \(error)") }
            checker.note("the coordinator refused its damaged log: \(error); restoring it")
            logRefusals += 1
            disk.restore(backup)
            damagedLogBackup = nil
            return startCoordinator()
        }
        if damagedLogBackup != nil {
            return checker.fail("a damaged log started as a bus: the log ends at #\(recovered.lastSequence), "
                + "but #\(disk.highestCommitted) had been committed")
        }
        checker.coordinatorStarted(recovered: recovered, disk: disk)
        let engine = CoordinatorEngine(
            configuration: configuration, epoch: recovered.lastEpoch + 1, log: log, recovered: recovered,
            controlEndpoint: "sim://control", advertisedPublishEndpoint: "sim://publish", logger: logger, now: time)
        engine.plantedBug = mutation
        coordinator = engine
        configuration.newBus = false
        checker.note("coordinator started, epoch \(engine.epoch), log through #\(recovered.lastSequence)")
        engine.flushLog()
        perform(engine.takeEffects())
        agenda.schedule(.coordinatorTick(incarnation: coordinatorIncarnation), at: now + 1_000)
        // Workers' SUB sockets reconnect to the new PUB by themselves, after a while.
        for index in workers.indices where workers[index].subscribed {
            workers[index].subscriptionReady = false
            agenda.schedule(
                .subscriptionUp(index, incarnation: workers[index].incarnation),
                at: now + Int64.random(in: 10_000...300_000, using: &random))
        }
    }

    func startWorker(_ index: Int, withCheckpoint: Bool) {
        var node = workers[index]
        node.incarnation += 1
        node.generation += 1
        node.subscribed = false
        node.subscriptionReady = false
        node.partitioned = false
        let engine = WorkerEngine(
            id: node.id, instance: random.next(), stores: node.stores.map { AnyStore($0) },
            heartbeat: configuration.heartbeatInterval, logger: logger, now: time)
        engine.plantedBug = mutation
        engine.keepsCheckpoint = true
        engine.transferChunkBytes = Self.chunkBytes
        engine.catchUp = CatchUp(window: Self.catchUpWindow)
        fetchesAhead += node.engine?.catchUp.fetchesAhead ?? 0
        if withCheckpoint, let checkpoint = node.checkpoint {
            do {
                try engine.resume(from: checkpoint, file: CheckpointFile(directory: "/simulated", worker: node.id))
            } catch {
                return checker.fail("\(node.id) cannot resume from its checkpoint: \(error)")
            }
        } else {
            node.checkpoint = nil
        }
        checker.workerStarted(index, from: withCheckpoint ? node.checkpoint?.lastApplied : nil)
        node.engine = engine
        workers[index] = node
        armCrashMarker(engine, worker: index)
        engine.handle(.start, at: time)
        perform(engine.takeEffects(), worker: index)
        agenda.schedule(.workerTick(index, incarnation: node.incarnation), at: now + 10_000)
        agenda.schedule(.workerCheckpoint(index, incarnation: node.incarnation), at: now + 1_000_000)
    }
}

extension Array where Element == [UInt8] {
    func prepended(_ frame: [UInt8]) -> [[UInt8]] { [frame] + self }
}
