import CoreMetrics
import FluxBusProtocol

/// The coordinator's Prometheus metrics. The shell owns it and feeds it what the engine already tells the world: the
/// COMPLETED it publishes and the answers it sends (per dispatch: a counter, a histogram), and, about once a second,
/// the engine's own STATUS view and counters (gauges). The engine itself knows nothing of metrics, so the simulator
/// runs it unchanged.
final class CoordinatorMetrics {
    let registry: MetricsRegistry
    private let durations: [CoreMetrics.Timer]
    private let actions: [CoreMetrics.Counter]
    private let dispatches: CoreMetrics.Counter
    private let queueDepth: CoreMetrics.Gauge
    private let lastCompleted: CoreMetrics.Gauge
    private let workers: [WorkerState: CoreMetrics.Gauge]
    private var replicaLag = LabeledGauges("fluxbus_replica_lag_sequences", labels: ["store", "worker"])
    private let divergedStores: CoreMetrics.Gauge
    private let malformed: CoreMetrics.Counter
    private let refused: CoreMetrics.Counter
    private let strangers: CoreMetrics.Counter
    private let quarantined: CoreMetrics.Counter
    private var policed = (malformed: 0, refused: 0, strangers: 0, quarantined: 0)
    private let logLast: CoreMetrics.Gauge
    private let logOldest: CoreMetrics.Gauge
    private let logBytes: CoreMetrics.Gauge
    private var snapshotBytes = LabeledGauges("fluxbus_snapshot_size_bytes", labels: ["store"])
    private var snapshotSequence = LabeledGauges("fluxbus_snapshot_sequence", labels: ["store"])
    private var poisoned = LabeledGauges("fluxbus_poisoned_actions", labels: ["store"])
    private var crashes = LabeledGauges("fluxbus_handler_crashes", labels: ["store"])
    /// The log's own timings (commits, checkpoints, snapshots), which the ``ActionLog`` reports as they happen.
    let log: LogMetrics

    /// The outcome label of a completed dispatch, in ``durations`` and ``actions`` order.
    enum Outcome: Int, CaseIterable {
        case ok, failed, skipped, unknown, unhandled

        /// The worst of its stores' outcomes; `unhandled` when no store handles the action.
        init(_ outcomes: [FluxBusProtocol.Outcome]) {
            if outcomes.isEmpty { self = .unhandled; return }
            var worst = Outcome.ok
            for outcome in outcomes {
                let this: Outcome = switch outcome.status {
                case .ok: .ok
                // A completion is never poisoned (marks come later, on answers): counted as what it is, a failure.
                case .failed, .poisoned: .failed
                case .skipped: .skipped
                case .unknown: .unknown
                }
                if this == .failed || (this == .unknown && worst != .failed) || (this == .skipped && worst == .ok) { worst = this }
            }
            self = worst
        }

        var label: String { "\(self)" }
    }

    init(registry: MetricsRegistry) {
        self.registry = registry
        durations = Outcome.allCases.map { registry.timer("fluxbus_dispatch_duration_seconds", [("outcome", $0.label)]) }
        actions = Outcome.allCases.map { registry.counter("fluxbus_actions_total", [("outcome", $0.label)]) }
        dispatches = registry.counter("fluxbus_dispatches_total")
        queueDepth = registry.gauge("fluxbus_queue_depth")
        lastCompleted = registry.gauge("fluxbus_last_completed_sequence")
        workers = Dictionary(uniqueKeysWithValues: WorkerState.allCases.map {
            ($0, registry.gauge("fluxbus_workers", [("state", "\($0)")]))
        })
        divergedStores = registry.gauge("fluxbus_diverged_stores")
        malformed = registry.counter("fluxbus_malformed_messages_total")
        refused = registry.counter("fluxbus_refused_messages_total")
        strangers = registry.counter("fluxbus_stranger_messages_total")
        quarantined = registry.counter("fluxbus_quarantined_peers_total")
        logLast = registry.gauge("fluxbus_log_last_sequence")
        logOldest = registry.gauge("fluxbus_log_oldest_sequence")
        logBytes = registry.gauge("fluxbus_log_size_bytes")
        log = LogMetrics(registry: registry)
    }

    /// A dispatch completed: what COMPLETED says of it.
    func completed(_ completed: Message.Completed) {
        let outcome = Outcome(completed.outcomes)
        durations[outcome.rawValue].recordMicroseconds(completed.elapsedMicros)
        actions[outcome.rawValue].increment()
    }

    /// A request was answered.
    func answered() { dispatches.increment() }

    /// The engine's view now: queue, workers, replicas, divergences, the log; and its policing counts since the last
    /// sample.
    func sample(_ status: Message.Status, policing: PeerPolicing, logFileBytes: UInt64?, snapshots: [LogSnapshot]) {
        queueDepth.record(Int64(status.queueLength))
        lastCompleted.record(Int64(clamping: status.sequence))
        var byState: [WorkerState: Int] = [:]
        for worker in status.workers { byState[worker.state, default: 0] += 1 }
        for (state, gauge) in workers { gauge.record(byState[state] ?? 0) }
        // A replica applies every sequence in order, handled or not: its worker's last applied is the replica's. Only
        // replicas on live and catching-up workers have a lag; a lost or gone one shows in `fluxbus_workers`.
        let applied = Dictionary(
            status.workers.filter { $0.state == .live || $0.state == .catchingUp }.map { ($0.id, $0.lastApplied) },
            uniquingKeysWith: max)
        var seen: Set<[String]> = []
        for store in status.stores {
            for replica in store.replicas {
                guard let last = applied[replica.worker] else { continue }
                let labels = [store.name, replica.worker]
                seen.insert(labels)
                replicaLag.set(labels, to: Double(status.sequence > last ? status.sequence - last : 0), in: registry)
            }
        }
        replicaLag.removeAll(except: seen)
        divergedStores.record(status.stores.filter { $0.divergedAt > 0 }.count)
        for store in status.stores {
            poisoned.set([store.name], to: Double(store.poisonedCount), in: registry)
            crashes.set([store.name], to: Double(store.crashCount), in: registry)
        }
        Self.advance(malformed, from: &policed.malformed, to: policing.malformed)
        Self.advance(refused, from: &policed.refused, to: policing.refused)
        Self.advance(strangers, from: &policed.strangers, to: policing.strangers)
        Self.advance(quarantined, from: &policed.quarantined, to: policing.quarantinedPeers)
        logLast.record(Int64(clamping: status.logLast))
        logOldest.record(Int64(clamping: status.logOldest))
        if let logFileBytes { logBytes.record(Int64(clamping: logFileBytes)) }
        for snapshot in snapshots {
            snapshotBytes.set([snapshot.store], to: Double(snapshot.size), in: registry)
            snapshotSequence.set([snapshot.store], to: Double(snapshot.sequence), in: registry)
        }
    }

    /// Turns a running total the engine keeps into a counter's increments.
    private static func advance(_ counter: CoreMetrics.Counter, from last: inout Int, to now: Int) {
        if now > last { counter.increment(by: Int64(now - last)) }
        last = now
    }
}
