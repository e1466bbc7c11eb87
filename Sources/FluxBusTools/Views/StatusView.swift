import Foundation
import FluxBus
import FluxBusProtocol

extension Message.Status {
    /// Workers that are live and have applied the last completed sequence.
    public var readyWorkers: Int {
        workers.filter { $0.state == .live && $0.lastApplied >= sequence }.count
    }
}

/// How the CLI shows `status`: readable at a glance, or JSON for scripts.
public enum StatusView {
    /// `status --json`: `epoch`; `seq` (the last completed); `queue`; `log` (`path`, `sync`, `oldestSeq`, `lastSeq`,
    /// `retain`); `figures` (`dispatches`, `actions`, `dispatchesPerSecond`, `actionsPerSecond`, `latencySamples`,
    /// `p50Micros`, `p90Micros`, `p99Micros`, `maxMicros`, `slowestWorker`, `slowestLag`); `workers` (`id`, `state`,
    /// `stores`, `lastSeq`, `lag`, `heartbeatAgeMillis`); `stores` (`name`, `dependsOn`, `handles`, `waitingFor`,
    /// `divergedAt`, `snapshotSeq`, `poisoned`, `lastPoisonedSeq`, `crashingAt`, `crashes`, `historyFrom`,
    /// `historyBefore`, `replicas` with `worker`, `lastSeq`, `digest`).
    public struct JSON: Codable, Sendable, Hashable {
        /// One worker: its state, stores, and how far behind the last completed sequence it is.
        public struct Worker: Codable, Sendable, Hashable {
            public let id: String
            public let state: String
            public let stores: [String]
            public let lastSeq: UInt64
            public let lag: UInt64
            public let heartbeatAgeMillis: UInt32
        }
        /// One replica of a store: its worker, the sequence its digest is for, and the digest in hex; null while the
        /// replica has reported none (one that installed a snapshot and has not run since).
        public struct Replica: Codable, Sendable, Hashable {
            public let worker: String
            public let lastSeq: UInt64
            public let digest: String?
        }
        /// One store: its declared dependencies and actions, what it still waits for, and its replicas.
        public struct Store: Codable, Sendable, Hashable {
            public let name: String
            public let dependsOn: [String]
            public let handles: [String]
            public let waitingFor: [String]
            public let divergedAt: UInt64?
            public let snapshotSeq: UInt64?
            /// Actions marked poisoned for it, and the newest; null when none.
            public let poisoned: UInt32
            public let lastPoisonedSeq: UInt64?
            /// A dispatch its handler crashed workers on that is not poisoned (yet), and how many crashes; null when none.
            public let crashingAt: UInt64?
            public let crashes: UInt32?
            /// The history it replayed when it first joined, `historyFrom` up to before `historyBefore`; null when none.
            /// A `historyFrom` above 1 means the log no longer held the start of the bus's history then.
            public let historyFrom: UInt64?
            public let historyBefore: UInt64?
            public let replicas: [Replica]
        }
        /// The coordinator's log: where it is, how it syncs, and the sequences it holds.
        public struct Log: Codable, Sendable, Hashable {
            public let path: String?
            public let sync: String
            public let oldestSeq: UInt64
            public let lastSeq: UInt64
            public let retain: UInt64
        }
        /// Throughput and latency lately, and the slowest replica.
        public struct Figures: Codable, Sendable, Hashable {
            public let dispatches: UInt64
            public let actions: UInt64
            public let dispatchesPerSecond: Double
            public let actionsPerSecond: Double
            public let latencySamples: UInt32
            public let p50Micros: UInt64
            public let p90Micros: UInt64
            public let p99Micros: UInt64
            public let maxMicros: UInt64
            public let slowestWorker: String?
            public let slowestLag: UInt64?
        }
        public let epoch: UInt64
        public let seq: UInt64
        public let queue: UInt32
        public let publishEndpoint: String
        public let log: Log
        public let figures: Figures
        public let workers: [Worker]
        public let stores: [Store]
    }

    public static func json(_ status: Message.Status) -> JSON {
        let figures = BusFigures(status)
        return JSON(
            epoch: status.epoch, seq: status.sequence, queue: status.queueLength, publishEndpoint: status.publishEndpoint,
            log: .init(path: status.logPath.isEmpty ? nil : status.logPath, sync: status.logSync, oldestSeq: status.logOldest,
                       lastSeq: status.logLast, retain: status.retain),
            figures: .init(
                dispatches: figures.raw.dispatchesTotal, actions: figures.raw.actionsTotal,
                dispatchesPerSecond: figures.dispatchesPerSecond, actionsPerSecond: figures.actionsPerSecond,
                latencySamples: figures.raw.latencySamples, p50Micros: figures.raw.latencyP50Micros,
                p90Micros: figures.raw.latencyP90Micros, p99Micros: figures.raw.latencyP99Micros,
                maxMicros: figures.raw.latencyMaxMicros, slowestWorker: figures.slowest?.worker, slowestLag: figures.slowest?.lag),
            workers: status.workers.map {
                .init(id: $0.id, state: $0.state.description, stores: $0.stores, lastSeq: $0.lastApplied,
                      lag: BusFigures.lag(of: $0, in: status),
                      heartbeatAgeMillis: $0.heartbeatAgeMillis)
            },
            stores: status.stores.map { store in
                .init(name: store.name, dependsOn: store.dependsOn, handles: store.handlesAll ? ["*"] : store.handles,
                      waitingFor: store.waitingFor, divergedAt: store.divergedAt == 0 ? nil : store.divergedAt,
                      snapshotSeq: store.snapshotSequence == 0 ? nil : store.snapshotSequence,
                      poisoned: store.poisonedCount, lastPoisonedSeq: store.lastPoisoned == 0 ? nil : store.lastPoisoned,
                      crashingAt: store.crashingAt == 0 ? nil : store.crashingAt,
                      crashes: store.crashingAt == 0 ? nil : store.crashCount,
                      historyFrom: store.historyBefore == 0 ? nil : store.historyFrom,
                      historyBefore: store.historyBefore == 0 ? nil : store.historyBefore,
                      replicas: store.replicas.map { .init(worker: $0.worker, lastSeq: $0.lastApplied, digest: $0.digest == 0 ? nil : StateDigest.hex($0.digest)) })
            })
    }

    /// The history a store new to the bus replayed, and whether it lacks the start of the bus's history.
    static func historyText(_ store: StoreStatus) -> String? {
        guard store.historyBefore > 1 else { return nil }
        let through = store.historyBefore - 1
        guard store.historyFrom > 1 else { return "history: joined after #\(through); replayed #1…#\(through)" }
        guard store.historyFrom <= through else {
            return "HISTORY STARTS AT #\(store.historyFrom), not #1: joined after #\(through), when the log held none of it"
        }
        return "HISTORY STARTS AT #\(store.historyFrom), not #1: joined after #\(through); the log no longer held "
            + "#1…#\(store.historyFrom - 1), so it replayed #\(store.historyFrom)…#\(through) only"
    }

    public static func text(_ status: Message.Status) -> String {
        let figures = BusFigures(status)
        var lines = [
            "epoch \(status.epoch)   seq \(status.sequence)   queue \(status.queueLength)   publish \(status.publishEndpoint)",
            "rates \(figures.ratesText)   latency \(figures.latencyText)   slowest \(figures.slowestText)",
            "log \(status.logPath.isEmpty ? "in memory" : status.logPath)   sync \(status.logSync)   holds #\(status.logOldest)…#\(status.logLast)"
                + "   retains \(status.retain)",
            "",
            "workers (\(status.workers.count))",
        ]
        if status.workers.isEmpty { lines.append("  none yet: start one with `fluxbus worker --id ID --store NAME=KIND`") }
        for worker in status.workers {
            let lag = BusFigures.lag(of: worker, in: status)
            lines.append("  " + pad(worker.id, 14) + pad(worker.state.description, 12) + pad("seq \(worker.lastApplied)", 12)
                + pad("lag \(lag)", 9) + pad("heard \(worker.heartbeatAgeMillis) ms ago", 20) + worker.stores.joined(separator: ", "))
        }
        lines += ["", "stores (\(status.stores.count))"]
        for store in status.stores {
            var line = "  " + pad(store.name, 14)
                + pad(store.dependsOn.isEmpty ? "-" : "after " + store.dependsOn.joined(separator: "+"), 20)
            if !store.waitingFor.isEmpty { line += "WAITING FOR " + store.waitingFor.joined(separator: ", ") + "  " }
            if store.divergedAt != 0 { line += "DIVERGED at #\(store.divergedAt)  " }
            if store.crashingAt != 0 {
                line += "CRASHING at #\(store.crashingAt) (\(store.crashCount) crash\(store.crashCount == 1 ? "" : "es"))  "
            }
            if store.poisonedCount != 0 { line += "POISONED \(store.poisonedCount), last #\(store.lastPoisoned)  " }
            line += "\(store.replicas.count) replica\(store.replicas.count == 1 ? "" : "s")"
            line += Self.digestsDiffer(store.replicas) ? "  (digests differ)" : ""
            if store.snapshotSequence != 0 { line += "  snapshot #\(store.snapshotSequence)" }
            lines.append(line)
            if let history = historyText(store) { lines.append("      " + history) }
            for replica in store.replicas {
                let digest = replica.digest == 0 ? "digest not reported yet" : StateDigest.hex(replica.digest)
                lines.append("      " + pad(replica.worker, 14) + pad("seq \(replica.lastApplied)", 12) + digest)
            }
        }
        return lines.joined(separator: "\n")
    }

    /// Whether two replicas reported different digests for the same sequence. Digests of different sequences say
    /// nothing (a replica behind differs anyway), and 0 is a digest not reported yet.
    static func digestsDiffer(_ replicas: [Replica]) -> Bool {
        let reported = replicas.filter { $0.digest != 0 }
        return Dictionary(grouping: reported, by: \.lastApplied).values.contains { Set($0.map(\.digest)).count > 1 }
    }

    static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text + " " : text.padding(toLength: width, withPad: " ", startingAt: 0)
    }
}
