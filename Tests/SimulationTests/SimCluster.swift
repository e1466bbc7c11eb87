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
        /// The shell's timer for the COMPLETEDs the coordinator holds for its next publication.
        case completedWindow(incarnation: Int)
        /// A worker's DEALER reconnected to a coordinator incarnation (``FaultPlan/dealerQueues``).
        case dealerConnected(Int, incarnation: Int, coordinator: Int)
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
        /// Its DEALER (``FaultPlan/dealerQueues``): whether its connection is up, what waits for one, and which HELLOs
        /// it takes.
        var dealerUp = true
        var dealerQueue: [[[UInt8]]] = []
        var hellos = HelloGate(holdsQueuedHellos: true)
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
    /// Draws for ``FaultPlan/readFailure``.
    var readRandom: SplitMix64
    /// The log as it was before a damage fault, for the operator's restore after the refusal.
    var damagedLogBackup: MemoryLogTables?
    /// How often a restarted coordinator refused its damaged log.
    var logRefusals = 0
    /// Busy handlers injected, and how many of them ended in a stop (the guard's GOODBYE).
    var busyPeriods = 0
    var busyStops = 0
    /// FETCHes workers sent ahead (``CatchUp/fetchAhead()``), counted from the engines that have stopped.
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
    let logger = Logger(label: "sim", factory: { _ in SwiftLogNoOpLogHandler() })
    /// The coordinator's configuration; an operator's `--new-bus` sets `newBus` for one start.
    var configuration: CoordinatorConfiguration
    let disk = SimulatedDisk()
    var coordinator: CoordinatorEngine?
    var coordinatorIncarnation = 0
    /// Whether the timer for the held COMPLETEDs is set, as the shell keeps one.
    var completedWindowSet = false
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
    /// A scenario's operator, for a coordinator that stopped because replicas read a decision its log lost: it
    /// restarts each replica named with empty state, as OPERATIONS.md section 9 says.
    var operatorRestartsMisreadReplicas = false
    /// Workers refused for being ahead of the log, which the operator restarts empty when they stop; and how many
    /// the operator restarted so.
    var refusedAheadOfLog: Set<Int> = []
    var restartedEmptyByOperator = 0
    /// Faults that struck while a log sync hung, and power cuts among them that lost a commit.
    var syncFaults = 0
    var lostCommits = 0
    /// Why the coordinator stopped, each time it stopped for its log.
    var storageStops: [String] = []
    /// A scenario's loss: called with each published message and a subscriber; true loses it for that subscriber.
    var losesPublished: ((Message, _ worker: Int) -> Bool)?
    /// A scenario's count: called with each message the coordinator sends one worker directly.
    var watchesDirectSends: ((Message, _ worker: Int) -> Void)?
    /// The HELLO rule of the workers' DEALERs, and how long one takes to reconnect (``FaultPlan/dealerQueues``).
    var helloRule = HelloRule.gated
    var dealerReconnect: ClosedRange<Int64> = 1_000...150_000
    /// Sends a DEALER refused at its high-water mark, and queued ones that left when a connection came up.
    var dealerDrops = 0
    var dealerQueuedSent = 0
    /// How long a worker takes to encode a state it was asked for, in µs: a scenario makes it longer than the ack
    /// timeout, as for a store of hundreds of megabytes.
    var encodeTime: ClosedRange<Int64> = 0...30_000

    init(
        seed: UInt64, faults: FaultPlan? = nil, topology: SimTopology = .remoteDependents, actionsPerClient: Int = 40,
        mutation: PlantedBug? = nil, workersDown: Set<Int> = [], idleClients: Int = 0, heartbeatInterval: Duration = .milliseconds(100),
        ackTimeout: Duration = BusDefaults.ackTimeout, stateTimeout: Duration = BusDefaults.stateTimeout
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
        readRandom = SplitMix64(seed: seed ^ 0x4EAD_FA11)
        // Faults that found bugs only together: half the runs with crashes during a sync have their power cuts lose
        // the commit (an operator recovers, as SyncScenarioTests script), and one in four has reads of the log fail.
        // Own draws, so that a seed's other faults stay as they were.
        var mixRandom = SplitMix64(seed: seed ^ 0x3_1C_4ED5)
        if faults == nil {
            if self.faults.crashDuringSync > 0, Bool.random(using: &mixRandom) { self.faults.powerCutsLoseCommits = true }
            if Int.random(in: 0..<4, using: &mixRandom) == 0 {
                self.faults.readFailure = Double.random(in: 0.005...0.05, using: &mixRandom)
            }
        }
        // Half the runs have sends queue in the workers' DEALERs through an outage, as libzmq's do; its own draw.
        var dealerRandom = SplitMix64(seed: seed ^ 0xDEA1_E40E)
        if faults == nil, Bool.random(using: &dealerRandom) { self.faults.dealerQueues = true }
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
        configuration.stateTimeout = stateTimeout
        // The largest batch `--max-batch` allows, so that a scenario can send one (the swarm's are of two to five).
        configuration.maxBatch = BusDefaults.largestBatch
        // Requests one at a time, two or three dispatches in flight, or as many as fit: each seed draws one. Its own
        // draw, so that a seed's other faults stay as they were.
        var flightRandom = SplitMix64(seed: seed ^ 0xF11_6478)
        configuration.maxInFlight = [1, 3, 4_096][Int.random(in: 0..<3, using: &flightRandom)]
        // Tiny chunks, so that every snapshot and STATE spans many of them and faults land mid-transfer.
        configuration.transferChunkBytes = Self.chunkBytes
        self.configuration = configuration
        workers = topology.stores.enumerated().map { WorkerNode(id: "w\($0.offset + 1)", stores: $0.element) }
        // Idle clients send only what a scenario gives them (``SimClient/adopt(_:at:cluster:)``).
        clients = (0..<3).map { SimClient(index: $0, actions: actionsPerClient) } + (3..<3 + idleClients).map { SimClient(index: $0, actions: 0) }
        checker.cluster = self
        operatorRecoversFromAheadWorkers = self.faults.powerCutsLoseCommits
        operatorRestartsMisreadReplicas = self.faults.powerCutsLoseCommits
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
        faults.readFailure = 0
        if coordinator == nil { agenda.schedule(.coordinatorRestart, at: now + 1_000) }
        coordinatorStalledUntil = min(coordinatorStalledUntil, now)
        for index in workers.indices {
            if workers[index].partitioned, coordinator != nil { scheduleDealerReconnect(index) }
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
}
