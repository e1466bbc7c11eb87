import Flux
import FluxBusProtocol

/// The outcome of one dispatch on the bus: its sequence, what every replica of every store did, and how long it
/// took from the coordinator's start to its completion.
public struct DispatchResult: Sendable, Hashable {
    /// One store's outcome across its replicas.
    public struct StoreSummary: Sendable, Hashable {
        public let name: String
        /// `ok`, `failed`, `skipped` or `unknown` (no replica answered in time). A store with at least one replica
        /// that succeeded and none that failed or skipped is `ok`; its unanswered replicas are in
        /// ``DispatchResult/outcomes``.
        public let status: OutcomeStatus
        /// How many replicas answered, whatever they did.
        public let replicas: Int
        /// How many replicas applied it (`ok`).
        public let applied: Int
        /// How many replicas did not answer in time (`unknown`); a planned store with no live replica counts one.
        public let unknown: Int
        /// The first failure's message, or the reason it was skipped or is unknown.
        public let error: String?
    }

    public let sequence: UInt64
    public let epoch: UInt64
    public let elapsedMicros: UInt64
    /// Every replica's outcome, in plan order.
    public let outcomes: [Outcome]

    public init(_ result: Message.Result) {
        sequence = result.sequence
        epoch = result.epoch
        elapsedMicros = result.elapsedMicros
        outcomes = result.outcomes
    }

    /// One summary per store, in plan order.
    public var stores: [StoreSummary] {
        var names: [String] = []
        for outcome in outcomes where !names.contains(outcome.store) { names.append(outcome.store) }
        return names.map { name in
            let replicas = outcomes.filter { $0.store == name }
            let merged = DependencyExecution.Settlement.merging(replicas.map { .init($0.status, message: $0.message) })
            let unknown = replicas.filter { $0.status == .unknown }.count
            return StoreSummary(
                name: name, status: merged?.status ?? .unknown, replicas: replicas.count - unknown,
                applied: replicas.filter { $0.status == .ok }.count, unknown: unknown, error: merged?.message)
        }
    }

    /// Whether every store that took part succeeded.
    public var succeeded: Bool { stores.allSatisfy { $0.status == .ok } }

    /// Whether some store's outcome is not known yet: its replicas did not answer in time. They apply the action
    /// when they return or catch up; the same request id asked again shows the outcome once one reports.
    public var isUnknown: Bool { stores.contains { $0.status == .unknown } }

    /// `ok`, `unknown` (some store's outcome is not known yet), or `failed` (a store failed or was skipped).
    public var verdict: String { succeeded ? "ok" : isUnknown ? "unknown" : "failed" }
}
