import CoreMetrics
import Foundation

/// The coordinator log's timings: each commit (an append to its journal, or a SQLite transaction), each fsync that
/// `--sync always` makes after one, each time SQLite applies the journaled commits, each batch-mode or truncating
/// checkpoint (which syncs the WAL), and each snapshot from the STATE_REQUEST that asks a replica for it
/// to its record in the log. The log (``BufferedLog``) reports to it when it has one, and reads no clock when it has none.
final class LogMetrics {
    private let commit: CoreMetrics.Timer
    private let sync: CoreMetrics.Timer
    private let checkpoint: CoreMetrics.Timer
    private let apply: CoreMetrics.Timer
    private let snapshot: CoreMetrics.Timer
    private let snapshots: CoreMetrics.Counter
    private var snapshotStarts: [String: ContinuousClock.Instant] = [:]

    init(registry: MetricsRegistry) {
        commit = registry.timer("fluxbus_log_sync_duration_seconds", [("step", "commit")])
        sync = registry.timer("fluxbus_log_sync_duration_seconds", [("step", "sync")])
        checkpoint = registry.timer("fluxbus_log_sync_duration_seconds", [("step", "checkpoint")])
        apply = registry.timer("fluxbus_log_sync_duration_seconds", [("step", "apply")])
        snapshot = registry.timer("fluxbus_snapshot_duration_seconds")
        snapshots = registry.counter("fluxbus_snapshots_total")
    }

    func committed(in duration: Duration) { commit.recordNanoseconds(duration.nanosecondsClamped) }

    /// Runs a commit, and records how long it took when it succeeds.
    func timingCommit(_ commit: () throws -> Void) rethrows {
        let started = ContinuousClock.now
        try commit()
        committed(in: .now - started)
    }

    /// Runs the WAL's fsync, and records how long it took when it succeeds.
    func timingSync(_ sync: () throws -> Void) rethrows {
        let started = ContinuousClock.now
        try sync()
        self.sync.recordNanoseconds((ContinuousClock.now - started).nanosecondsClamped)
    }

    /// Runs SQLite's application of the journaled commits, and records how long it took when it succeeds.
    func timingApply(_ body: () throws -> Void) rethrows {
        let started = ContinuousClock.now
        try body()
        apply.recordNanoseconds((ContinuousClock.now - started).nanosecondsClamped)
    }

    func checkpointed(in duration: Duration) { checkpoint.recordNanoseconds(duration.nanosecondsClamped) }

    func snapshotRequested(store: String) { snapshotStarts[store] = .now }

    func snapshotSaved(store: String) {
        snapshots.increment()
        guard let start = snapshotStarts.removeValue(forKey: store) else { return }
        snapshot.recordNanoseconds((ContinuousClock.now - start).nanosecondsClamped)
    }
}
