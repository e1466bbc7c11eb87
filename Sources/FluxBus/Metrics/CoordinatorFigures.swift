import Foundation
import FluxBusProtocol

/// What the coordinator's shell measures of its engine: throughput and latency for STATUS (always), and Prometheus
/// metrics (when served). It sees every message the engine sends before it is bundled, and samples the engine's
/// state about once a second. It lives on the coordinator's I/O thread.
final class CoordinatorFigures {
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    private var window = DispatchWindow(now: SystemClock.now)
    private let metrics: CoordinatorMetrics?

    init(metrics: CoordinatorMetrics?) { self.metrics = metrics }

    /// Counts completions and answers, and fills in STATUS's figures. On the hot path: no allocation here.
    func observe(_ message: inout Message) {
        if case .status = message {
            // Taken out and put back rather than copied: a copy retained and released every field of the record.
            guard case .status(var status) = consume message else { preconditionFailure("a STATUS") }
            status.figures = window.figures(at: SystemClock.now)
            message = .status(status)
            return
        }
        switch message {
        case .completed(let completed):
            window.actionCompleted(micros: completed.elapsedMicros)
            metrics?.completed(completed)
        case .result, .batchResult:
            window.dispatchAnswered()
            metrics?.answered()
        case .stateRequest(let request) where request.requestID.hasPrefix("snapshot-"):
            metrics?.log.snapshotRequested(store: request.store)
        default:
            break
        }
    }

    /// A count for the rates, and the engine's view for the gauges.
    func sample(_ engine: CoordinatorEngine) {
        window.tick(at: SystemClock.now)
        guard let metrics else { return }
        let log = engine.log
        metrics.sample(
            engine.status(requestID: ""), policing: engine.policing,
            logFileBytes: log.path.map(Self.fileBytes), snapshots: Array(log.snapshots.values))
    }

    /// A SQLite log's size: the file, its write-ahead log and the journal beside it.
    private static func fileBytes(_ path: String) -> UInt64 {
        let journal = LogJournal.path(inDirectory: (path as NSString).deletingLastPathComponent)
        return [path, path + "-wal", journal].reduce(0) { total, file in
            total + ((try? FileManager.default.attributesOfItem(atPath: file)[.size] as? UInt64) ?? 0)
        }
    }
}
