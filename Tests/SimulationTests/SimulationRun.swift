import Flux
@testable import FluxBus
import FluxBusProtocol

/// One seed's run: faults for a while, then quiet, then the liveness bound; what it found, and how much it did.
struct SimulationRun {
    /// Simulated microseconds with faults on, then the bound within which everything must complete once they stop.
    static let faultyPhase: Int64 = 20_000_000
    static let livenessBound: Int64 = 30_000_000

    let seed: UInt64
    let faults: FaultPlan
    let steps: Int
    /// Busy handlers injected, and those that ended in a stop.
    let busy: (periods: Int, stops: Int)
    /// Worker processes that died in a trapping handler (a poison action), and the poison marks the log ended with.
    let poison: (traps: Int, marks: Int)
    /// Coordinator crashes and power cuts that struck while a log sync hung; power cuts that lost a commit; and the
    /// coordinator's stops for its log.
    let syncFaults: Int
    let lostCommits: Int
    let storageStops: Int
    /// Reads of the log that failed (``FaultPlan/readFailure``).
    let failedReads: Int
    /// FETCHes that workers sent ahead while an answer was arriving.
    let fetchesAhead: Int
    /// Messages that waited in a worker's DEALER through an outage and reached a coordinator after it, and sends a
    /// DEALER refused at its high-water mark.
    let dealerQueuedSent: Int
    let dealerDrops: Int
    let ledgerTraps: Set<UInt32>
    let violation: String?
    let recentSteps: [String]
    /// Everything a replay must reproduce exactly.
    let fingerprint: [UInt64]
    /// How much state moved in chunks, by kind (``SimChecker/transfers``), and how many snapshots the log recorded.
    let transfers: [String: Int]
    /// ACKs held to the model, in runs and alone, and the runs that reached the coordinator.
    let acks: AckCoverage

    init(seed: UInt64, mutation: PlantedBug? = nil, faults: FaultPlan? = nil, topology: SimTopology = .remoteDependents) {
        let cluster = SimCluster(seed: seed, faults: faults, topology: topology, mutation: mutation)
        // The plan as drawn: quiesce() turns the faults off, and a report must say what the run went through.
        self.faults = cluster.faults
        cluster.run(until: Self.faultyPhase)
        if cluster.checker.violation == nil {
            cluster.quiesce()
            var deadline = Self.faultyPhase + Self.livenessBound
            while cluster.checker.violation == nil, cluster.now < deadline, !Self.settled(cluster) {
                cluster.run(until: min(cluster.now + 100_000, deadline))
            }
            if cluster.checker.violation == nil, !Self.settled(cluster) {
                cluster.checker.fail("liveness: \(Self.lagging(cluster)) \(Self.livenessBound / 1_000_000) s after faults stopped")
            }
            // A little longer, quiet, so that replicas settle what they hold before the final comparison.
            deadline = cluster.now + 2_000_000
            cluster.run(until: deadline)
            cluster.checker.checkAtEnd()
        }
        self.seed = seed
        steps = cluster.steps
        busy = (cluster.busyPeriods, cluster.busyStops)
        poison = (cluster.handlerTraps, cluster.disk.poison.count)
        syncFaults = cluster.syncFaults
        lostCommits = cluster.lostCommits
        storageStops = cluster.storageStops.count
        failedReads = cluster.disk.failedReads
        fetchesAhead = cluster.fetchesAhead + cluster.workers.compactMap(\.engine).reduce(0) { $0 + $1.catchUp.fetchesAhead }
        dealerQueuedSent = cluster.dealerQueuedSent
        dealerDrops = cluster.dealerDrops
        ledgerTraps = cluster.ledgerTraps
        transfers = cluster.checker.transfers
        acks = cluster.checker.ackCoverage
        violation = cluster.checker.violation
        recentSteps = violation == nil ? [] : cluster.checker.recentSteps
        fingerprint = [UInt64(cluster.steps), UInt64(cluster.now)]
            + cluster.checker.order.sorted { $0.key < $1.key }.map { $0.key << 32 | UInt64($0.value) }
    }

    /// Every client got every answer, every replica applied everything that completed, and the coordinator holds no
    /// COMPLETED back.
    static func settled(_ cluster: SimCluster) -> Bool {
        guard cluster.isQuiet, let coordinator = cluster.coordinator, coordinator.isIdle,
            coordinator.heldCompletionsUntil == nil
        else { return false }
        return cluster.workers.indices.filter { !cluster.retired.contains($0) }.allSatisfy { index in
            cluster.workers[index].engine.map { $0.phase == .live && $0.lastApplied == coordinator.lastCompleted } ?? false
        }
    }

    private static func lagging(_ cluster: SimCluster) -> String {
        let clients = cluster.clients.filter { !$0.isDone }.map { "client\($0.index)" }
        let coordinator = cluster.coordinator.map { "coordinator at #\($0.lastCompleted), queue \($0.queue.count)" } ?? "coordinator down"
        let workers = cluster.workers.map { node in
            "\(node.id) " + (node.engine.map {
                "\($0.phase) at #\($0.lastApplied)" + ($0.current.map { " (#\($0.sequence) in hand\($0.isReplay ? ", replaying" : ""))" } ?? "")
                    + ($0.phase == .live ? "" : " [\($0.catchUp.summary)]")
            } ?? "down")
        }
        return "not settled (\(coordinator); \(workers.joined(separator: ", "))\(clients.isEmpty ? "" : "; waiting: \(clients.joined(separator: ","))"))"
    }

    /// What a failure prints: the seed, the fault plan, the violation and the steps that led to it.
    var report: String {
        """
        seed \(seed) failed after \(steps) steps: \(violation ?? "no violation")
        faults: \(faults)\(ledgerTraps.isEmpty ? "" : ", the ledger traps on id \(ledgerTraps.sorted())")
        replay: make simulate SEED=\(seed)
        last steps:
        \(recentSteps.map { "  " + $0 }.joined(separator: "\n"))
        """
    }
}
