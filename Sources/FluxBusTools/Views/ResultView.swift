import Foundation
import FluxBus
import FluxBusProtocol

/// How the CLI shows a dispatch's result: a short text table, or the JSON object scripts rely on.
public enum ResultView {
    /// `dispatch --json`: `seq`, `status` (`ok`, `failed`, `unknown` or `unhandled`), `stores` (name → `status`, `replicas` that
    /// answered, how many `applied` it, how many are `unknown`, `error`), `elapsedMicros`, and every replica's outcome
    /// under `outcomes`.
    public struct JSON: Codable, Sendable, Hashable {
        /// One store's outcome across its replicas.
        public struct Store: Codable, Sendable, Hashable {
            public let status: String
            public let replicas: Int
            public let applied: Int
            public let unknown: Int
            public let error: String?
        }
        /// One replica's outcome.
        public struct Replica: Codable, Sendable, Hashable {
            public let store: String
            public let worker: String
            public let status: String
            public let message: String?
            public let digest: String
        }
        public let seq: UInt64
        public let epoch: UInt64
        public let status: String
        public let stores: [String: Store]
        public let outcomes: [Replica]
        public let elapsedMicros: UInt64
        /// With `--trace`: the traceparent sent, and the waterfall (absent otherwise).
        public var traceparent: String?
        public var trace: [WaterfallView.Step]?
    }

    public static func json(_ result: DispatchResult) -> JSON {
        JSON(
            seq: result.sequence, epoch: result.epoch, status: result.verdict,
            stores: Dictionary(uniqueKeysWithValues: result.stores.map {
                ($0.name, JSON.Store(
                    status: $0.status.description, replicas: $0.replicas, applied: $0.applied, unknown: $0.unknown,
                    error: $0.error))
            }),
            outcomes: result.outcomes.map {
                JSON.Replica(
                    store: $0.store, worker: $0.worker, status: $0.status.description,
                    message: $0.message.isEmpty ? nil : $0.message, digest: StateDigest.hex($0.digest))
            },
            elapsedMicros: result.elapsedMicros,
            trace: result.trace.isEmpty ? nil : result.trace.map(WaterfallView.Step.init))
    }

    public static func text(_ result: DispatchResult, actionType: String) -> String {
        var lines = ["#\(result.sequence) \(actionType): \(result.verdict) in \(Self.duration(micros: result.elapsedMicros))"]
        if result.outcomes.isEmpty {
            lines.append("  no store handled \(actionType) when it was dispatched; a store that joins later and handles it builds its state from it")
        }
        let width = max(8, result.outcomes.map(\.store.count).max() ?? 0)
        for outcome in result.outcomes {
            var line = "  " + outcome.store.padding(toLength: width, withPad: " ", startingAt: 0) + "  "
                // Eight columns fit every status but `poisoned`, which gets its one space.
                + outcome.status.description.padding(toLength: max(8, outcome.status.description.count + 1), withPad: " ", startingAt: 0)
                + (outcome.worker.isEmpty ? "-" : outcome.worker)
            if !outcome.message.isEmpty { line += "  " + outcome.message }
            lines.append(line)
        }
        return lines.joined(separator: "\n")
    }

    static func duration(micros: UInt64) -> String {
        micros < 1000 ? "\(micros) µs" : String(format: "%.1f ms", Double(micros) / 1000)
    }

    /// Encodes any view as JSON with sorted keys, the way every `--json` prints.
    public static func encode(_ value: some Encodable, pretty: Bool = false) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = pretty ? [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}
