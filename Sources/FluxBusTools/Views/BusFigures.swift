import FluxBus
import FluxBusProtocol

/// The figures an operator checks first, worked out from one STATUS: rates, latency percentiles, the slowest replica,
/// and whether each worker's replicas agree with the others. `status` and `top` show the same ones.
public struct BusFigures: Sendable {
    /// Requests answered per second, lately.
    public let dispatchesPerSecond: Double
    /// Actions completed per second, lately.
    public let actionsPerSecond: Double
    /// The STATUS's figures as sent.
    public let raw: DispatchFigures
    /// The worker furthest behind the last completed sequence among those live or catching up, and by how much; nil
    /// when there is none.
    public let slowest: (worker: String, lag: UInt64)?
    /// Worker id → the stores whose replica on it disagrees with another replica's digest at the same sequence, or
    /// that were marked diverged.
    public let disagreements: [String: [String]]

    public init(_ status: Message.Status) {
        raw = status.figures
        dispatchesPerSecond = Double(status.figures.dispatchRateMilli) / 1000
        actionsPerSecond = Double(status.figures.actionRateMilli) / 1000
        slowest = status.workers.filter { $0.state == .live || $0.state == .catchingUp }
            .map { ($0.id, Self.lag(of: $0, in: status)) }
            .max { $0.1 < $1.1 }
        var disagreements: [String: [String]] = [:]
        for store in status.stores {
            for replica in store.replicas where replica.digest != 0 {
                let differs = store.replicas.contains {
                    $0.digest != 0 && $0.lastApplied == replica.lastApplied && $0.digest != replica.digest
                }
                if differs || store.divergedAt != 0 { disagreements[replica.worker, default: []].append(store.name) }
            }
        }
        self.disagreements = disagreements
    }

    /// How far a worker is behind the last completed sequence.
    public static func lag(of worker: WorkerStatus, in status: Message.Status) -> UInt64 {
        status.sequence > worker.lastApplied ? status.sequence - worker.lastApplied : 0
    }

    /// `12.5/s`, with one decimal.
    public static func rate(_ perSecond: Double) -> String {
        let tenths = Int((perSecond * 10).rounded())
        return "\(tenths / 10).\(tenths % 10)/s"
    }

    /// `850 µs`, `1.2 ms` or `3.4 s`.
    public static func duration(micros: UInt64) -> String {
        func tenths(_ value: UInt64, _ unit: UInt64, _ suffix: String) -> String {
            let scaled = (value * 10 + unit / 2) / unit
            return "\(scaled / 10).\(scaled % 10) \(suffix)"
        }
        if micros < 1000 { return "\(micros) µs" }
        if micros < 1_000_000 { return tenths(micros, 1000, "ms") }
        return tenths(micros, 1_000_000, "s")
    }

    /// `12.5/s dispatches, 25.0/s actions`.
    public var ratesText: String {
        "\(Self.rate(dispatchesPerSecond)) dispatches, \(Self.rate(actionsPerSecond)) actions"
    }

    /// `p50 150 µs  p90 420 µs  p99 900 µs  max 1.2 ms`, or a note that nothing completed yet.
    public var latencyText: String {
        guard raw.latencySamples > 0 else { return "no dispatch completed yet" }
        return "p50 \(Self.duration(micros: raw.latencyP50Micros))  p90 \(Self.duration(micros: raw.latencyP90Micros))  "
            + "p99 \(Self.duration(micros: raw.latencyP99Micros))  max \(Self.duration(micros: raw.latencyMaxMicros))"
    }

    /// `w2 (lag 3)`, or `none`.
    public var slowestText: String {
        slowest.map { "\($0.worker) (lag \($0.lag))" } ?? "none"
    }
}
