import Foundation
import FluxBus
import FluxBusProtocol

/// What `fluxbus top` shows for one STATUS: a screen for a terminal, or one line for a pipe.
public enum TopView {
    /// The screen, one string per row, clipped to `width` columns.
    public static func screen(_ status: Message.Status, coordinator: String, at time: Date, width: Int) -> [String] {
        let figures = BusFigures(status)
        var states: [WorkerState: Int] = [:]
        for worker in status.workers { states[worker.state, default: 0] += 1 }
        let stateCounts = WorkerState.allCases.map { "\(states[$0] ?? 0) \($0)" }.joined(separator: ", ")
        var rows = [
            "fluxbus top   \(coordinator)   epoch \(status.epoch)   \(clock(time))   q quits",
            "throughput  \(figures.ratesText)   total \(figures.raw.dispatchesTotal) dispatches, \(figures.raw.actionsTotal) actions",
            "latency     \(figures.latencyText)" + (figures.raw.latencySamples > 0 ? "   (latest \(figures.raw.latencySamples) actions)" : ""),
            "queue       \(status.queueLength)   seq \(status.sequence)   log #\(status.logOldest)…#\(status.logLast) (\(status.logSync))",
            "workers     \(stateCounts)   slowest \(figures.slowestText)",
            "",
            StatusView.pad("WORKER", 14) + StatusView.pad("STATE", 13) + StatusView.pad("SEQ", 10) + StatusView.pad("LAG", 7)
                + StatusView.pad("HEARD", 10) + StatusView.pad("DIGESTS", 16) + "STORES",
        ]
        if status.workers.isEmpty { rows.append("(no worker yet)") }
        for worker in status.workers {
            rows.append(StatusView.pad(worker.id, 14) + StatusView.pad(worker.state.description, 13)
                + StatusView.pad("\(worker.lastApplied)", 10) + StatusView.pad("\(BusFigures.lag(of: worker, in: status))", 7)
                + StatusView.pad("\(worker.heartbeatAgeMillis) ms", 10)
                + StatusView.pad(digestText(figures.disagreements[worker.id]), 16) + worker.stores.joined(separator: ", "))
        }
        return rows.map { String($0.prefix(max(width, 1))) }
    }

    /// One line per refresh, for standard output that is not a terminal.
    public static func line(_ status: Message.Status, at time: Date) -> String {
        let figures = BusFigures(status)
        let live = status.workers.filter { $0.state == .live }.count
        let disagreeing = figures.disagreements.keys.sorted()
        return "\(clock(time)) seq \(status.sequence) queue \(status.queueLength) \(figures.ratesText) "
            + "latency \(figures.latencyText) workers \(live)/\(status.workers.count) live slowest \(figures.slowestText) "
            + "digests \(disagreeing.isEmpty ? "agree" : "differ on " + disagreeing.joined(separator: ","))"
    }

    static func digestText(_ stores: [String]?) -> String {
        guard let stores else { return "agree" }
        return "DIFFER " + stores.joined(separator: ",")
    }

    /// `03:01:02` in UTC.
    static func clock(_ time: Date) -> String {
        let seconds = Int(time.timeIntervalSince1970) % 86_400
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(two(seconds / 3600)):\(two(seconds / 60 % 60)):\(two(seconds % 60))"
    }
}
