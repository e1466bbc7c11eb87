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
        case subscriptionUp(Int, incarnation: Int)
        case healPartition(Int)
        case clientWake(Int)
        case chaos
    }

    /// Who sent a message to the coordinator, and the connection's generation when it was sent: a message sent over
    /// a connection that has since broken (a crash, a partition) is lost.
    enum Link { case worker(Int, generation: Int), client(Int, generation: Int) }

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
        var checkpoint: Checkpoint?
        var routingID: [UInt8] { Array(id.utf8) }
    }

    let seed: UInt64
    var random: SplitMix64
    var faults: FaultPlan
    let checker: SimChecker
    private(set) var now: Int64 = 0
    private(set) var steps = 0
    private var agenda = EventQueue<Event>()
    private let codec = Codec()
    private let logger = Logger(label: "sim", factory: { _ in SwiftLogNoOpLogHandler() })
    let configuration: CoordinatorConfiguration
    let disk = SimulatedDisk()
    private(set) var coordinator: CoordinatorEngine?
    private var coordinatorIncarnation = 0
    private var coordinatorDownSince: Int64?
    var workers: [WorkerNode]
    var clients: [SimClient]
    /// Whether faults are still injected; ``quiesce()`` ends them.
    private(set) var faultsOn = true
    let mutation: PlantedBug?
    /// Workers kept down on purpose by a scenario: no fault or ``quiesce()`` restarts them.
    var retired: Set<Int> = []
    /// A scenario's trigger: called with what reaches the coordinator; true crashes it instead of delivering.
    var crashesCoordinatorOn: ((SimCluster, [Message]) -> Bool)?

    init(
        seed: UInt64, faults: FaultPlan? = nil, topology: SimTopology = .remoteDependents, actionsPerClient: Int = 40,
        mutation: PlantedBug? = nil, workersDown: Set<Int> = []
    ) {
        self.seed = seed
        self.mutation = mutation
        random = SplitMix64(seed: seed)
        self.faults = faults ?? FaultPlan.swarm(using: &random)
        checker = SimChecker()
        var configuration = CoordinatorConfiguration(
            controlEndpoint: "sim://control", publishEndpoint: "sim://publish", heartbeatInterval: .milliseconds(100),
            retain: 30, rememberedRequests: 1_000, replayBatch: 50, tickInterval: .milliseconds(20))
        configuration.recoveryGrace = .seconds(3)
        self.configuration = configuration
        workers = topology.stores.enumerated().map { WorkerNode(id: "w\($0.offset + 1)", stores: $0.element) }
        clients = (0..<3).map { SimClient(index: $0, actions: actionsPerClient) }
        checker.cluster = self
        startCoordinator()
        retired = workersDown
        for index in workers.indices where !workersDown.contains(index) { startWorker(index, withCheckpoint: false) }
        for index in clients.indices { agenda.schedule(.clientWake(index), at: Int64(index) * 1_000 + 50_000) }
        agenda.schedule(.chaos, at: 100_000)
    }

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
        for index in workers.indices {
            workers[index].partitioned = false
            workers[index].stalledUntil = min(workers[index].stalledUntil, now)
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
            coordinator.handle(.tick, at: time)
            perform(coordinator.takeEffects())
            agenda.schedule(.coordinatorTick(incarnation: incarnation), at: now + configuration.tickInterval.microseconds)
        case .coordinatorRestart:
            if coordinator == nil { startCoordinator() }
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
        case .workerRestart(let index):
            if workers[index].engine == nil, !retired.contains(index) {
                startWorker(index, withCheckpoint: Double.random(in: 0..<1, using: &random) < faults.keepsCheckpoint)
            }
        case .subscriptionUp(let index, let incarnation):
            if incarnation == workers[index].incarnation, workers[index].subscribed { workers[index].subscriptionReady = true }
        case .healPartition(let index):
            workers[index].partitioned = false
        case .clientWake(let index):
            var client = clients[index]
            client.wake(at: now, cluster: self)
            clients[index] = client
        case .chaos:
            if faultsOn { injectFaults() }
            agenda.schedule(.chaos, at: now + 100_000)
        }
    }

    private var time: MonotonicTime { MonotonicTime(nanoseconds: now * 1_000) }

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
        }
    }

    // MARK: - Faults

    /// Every 100 ms of simulated time: each fault of the plan, by its rate.
    private func injectFaults() {
        func happens(_ ratePerSecond: Double) -> Bool {
            ratePerSecond > 0 && Double.random(in: 0..<1, using: &random) < ratePerSecond / 10
        }
        let index = Int.random(in: 0..<workers.count, using: &random)
        if happens(faults.partitionRate), workers[index].engine != nil, !workers[index].partitioned {
            workers[index].partitioned = true
            workers[index].generation += 1
            checker.note("fault: partition w\(index + 1)")
            agenda.schedule(.healPartition(index), at: now + Int64.random(in: 100_000...3_000_000, using: &random))
        }
        if happens(faults.workerCrashRate), workers[index].engine != nil {
            crashWorker(index)
            agenda.schedule(.workerRestart(index), at: now + Int64.random(in: 100_000...2_000_000, using: &random))
        }
        if happens(faults.stallRate), workers[index].engine != nil {
            workers[index].stalledUntil = now + Int64.random(in: 50_000...1_500_000, using: &random)
            checker.note("fault: stall w\(index + 1) until \(self.workers[index].stalledUntil)")
        }
        if happens(faults.coordinatorCrashRate), coordinator != nil {
            crashCoordinator()
        }
    }

    func crashWorker(_ index: Int) {
        checker.note("fault: crash w\(index + 1)")
        workers[index].engine = nil
        workers[index].generation += 1
        workers[index].subscribed = false
        workers[index].subscriptionReady = false
        workers[index].stalledUntil = 0
    }

    func crashCoordinator() {
        checker.note("fault: crash the coordinator")
        coordinator = nil
        coordinatorIncarnation += 1
        for index in workers.indices { workers[index].generation += 1 }
        for index in clients.indices { clients[index].generation += 1 }
        agenda.schedule(.coordinatorRestart, at: now + Int64.random(in: 100_000...1_500_000, using: &random))
    }

    // MARK: - Starting

    private func startCoordinator() {
        let log = SimulatedLog(disk: disk) { [unowned self] in
            faults.flushFailure > 0 && Double.random(in: 0..<1, using: &random) < faults.flushFailure
        }
        let recovered: LogRecovery
        do { recovered = try log.recover() } catch { return checker.fail("the log could not be recovered: \(error)") }
        checker.coordinatorStarted(recovered: recovered, disk: disk)
        let engine = CoordinatorEngine(
            configuration: configuration, epoch: recovered.lastEpoch + 1, log: log, recovered: recovered,
            controlEndpoint: "sim://control", advertisedPublishEndpoint: "sim://publish", logger: logger, now: time)
        engine.plantedBug = mutation
        coordinator = engine
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
        engine.handle(.start, at: time)
        perform(engine.takeEffects(), worker: index)
        agenda.schedule(.workerTick(index, incarnation: node.incarnation), at: now + 10_000)
        agenda.schedule(.workerCheckpoint(index, incarnation: node.incarnation), at: now + 1_000_000)
    }

    // MARK: - Effects

    private func perform(_ effects: [CoordinatorEffect]) {
        for effect in effects {
            switch effect {
            case .send(let message, let routingID):
                let frames = codec.encode(message)
                checker.coordinatorSent(message)
                if let index = workers.firstIndex(where: { $0.routingID == routingID }) {
                    deliver(.toWorker(index, frames, fromSubscriber: false, generation: workers[index].generation), link: 3 * index)
                } else if let index = clients.firstIndex(where: { $0.routingID == routingID }) {
                    deliver(.toClient(index, frames, generation: clients[index].generation), link: 100 + index)
                }
            case .publish(let message):
                let frames = codec.encode(message)
                checker.coordinatorSent(message)
                for index in workers.indices where workers[index].subscriptionReady && !workers[index].partitioned {
                    if faults.publishLoss > 0, Double.random(in: 0..<1, using: &random) < faults.publishLoss { continue }
                    deliver(.toWorker(index, frames, fromSubscriber: true, generation: workers[index].generation), link: 3 * index + 1)
                }
            case .storageFailed(let error):
                checker.note("the coordinator stops: \(error.message)")
                crashCoordinator()
            }
        }
    }

    private func perform(_ effects: [WorkerEffect], worker index: Int) {
        for effect in effects {
            switch effect {
            case .send(let message):
                guard !workers[index].partitioned else { continue }
                deliver(.toCoordinator(codec.encode(message).prepended(workers[index].routingID),
                                       link: .worker(index, generation: workers[index].generation)), link: 3 * index + 2)
            case .subscribe:
                workers[index].subscribed = true
                agenda.schedule(
                    .subscriptionUp(index, incarnation: workers[index].incarnation),
                    at: now + Int64.random(in: 1_000...200_000, using: &random))
            case .writeCheckpoint(let checkpoint):
                workers[index].checkpoint = checkpoint
            case .event(.applied(let sequence, let store, let status)):
                checker.applied(by: workers[index].id, sequence: sequence, store: store, status: status)
            case .event:
                break
            case .stop(let error):
                if let error { checker.fail("worker \(workers[index].id) stopped: \(error.message)") }
                workers[index].engine = nil
            }
        }
    }

    /// Sends from a client to the coordinator.
    func send(_ message: Message, from client: SimClient) {
        deliver(.toCoordinator(codec.encode(message).prepended(client.routingID),
                               link: .client(client.index, generation: client.generation)), link: 200 + client.index)
    }

    func schedule(_ event: Event, after micros: Int64) { agenda.schedule(event, at: now + micros) }

    /// Per-connection FIFO: a message never overtakes an earlier one on the same connection.
    private var lastArrival: [Int: Int64] = [:]

    private func deliver(_ event: Event, link: Int) {
        let latency = Int64.random(in: faults.latency, using: &random)
        let arrival = max(lastArrival[link] ?? 0, now + latency)
        lastArrival[link] = arrival
        agenda.schedule(event, at: arrival)
    }

    private func describe(_ event: Event) -> String {
        switch event {
        case .toCoordinator(let frames, let link): "→coordinator from \(link): \(summary(Array(frames.dropFirst())))"
        case .toWorker(let index, let frames, let sub, _): "→w\(index + 1)\(sub ? " (sub)" : ""): \(summary(frames))"
        case .toClient(let index, let frames, _): "→client\(index): \(summary(frames))"
        default: "\(event)"
        }
    }

    private func summary(_ frames: [[UInt8]]) -> String {
        guard let messages = try? codec.decodeAll(frames) else { return "malformed" }
        return messages.prefix(3).map { SimChecker.brief($0) }.joined(separator: ", ") + (messages.count > 3 ? " …(\(messages.count))" : "")
    }
}

/// Which stores each simulated worker hosts.
struct SimTopology {
    let stores: [[any Store.Type]]

    /// Two replicas of each store, and every replica of the audit store on a worker without the ledger: each
    /// dependent learns the ledger's outcome from the coordinator's RELEASE.
    static let remoteDependents = SimTopology(stores: [
        [SimLedger.self, SimTally.self], [SimLedger.self], [SimAudit.self, SimTally.self], [SimAudit.self],
    ])

    /// One audit replica beside a ledger replica, resolving the dependency locally, and one remote.
    static let colocatedDependent = SimTopology(stores: [
        [SimLedger.self, SimTally.self], [SimLedger.self, SimAudit.self], [SimAudit.self, SimTally.self],
    ])
}

extension Array where Element == [UInt8] {
    func prepended(_ frame: [UInt8]) -> [[UInt8]] { [frame] + self }
}
