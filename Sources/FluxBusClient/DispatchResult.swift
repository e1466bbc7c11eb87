import Flux
import FluxBusProtocol

/// The outcome of one dispatch on the bus: its sequence, what every replica of every store did, and how long it
/// took from the coordinator's start to its completion.
public struct DispatchResult: Sendable, Hashable {
    /// One store's outcome across its replicas.
    public struct StoreSummary: Sendable, Hashable {
        public let name: String
        /// `ok`, `failed`, `skipped`, `unknown` (no replica answered in time) or `poisoned` (no replica will apply
        /// it: handlers crashed on it). A store with at least one replica that succeeded and none that failed or
        /// skipped is `ok`; its unanswered replicas are in ``DispatchResult/outcomes``.
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
    /// A traced dispatch's waterfall (``BusClient/dispatch(_:payload:error:requestID:timeout:trace:)``), in µs from
    /// the coordinator's receipt of the request, on its clock; empty when the dispatch was not traced.
    public let trace: [TraceStep]

    public init(_ result: Message.Result) {
        sequence = result.sequence
        epoch = result.epoch
        elapsedMicros = result.elapsedMicros
        outcomes = result.outcomes
        trace = result.trace
    }

    /// One summary per store, in plan order.
    public var stores: [StoreSummary] {
        var names: [String] = []
        for outcome in outcomes where !names.contains(outcome.store) { names.append(outcome.store) }
        return names.map { name in
            let replicas = outcomes.filter { $0.store == name }
            let merged = DependencyExecution.Settlement.merging(replicas.map { .init($0.status, message: $0.message) })
            let unknown = replicas.filter { $0.status == .unknown }.count
            let poisoned = replicas.contains { $0.status == .poisoned }
            return StoreSummary(
                name: name, status: poisoned ? .poisoned : merged?.status ?? .unknown, replicas: replicas.count - unknown,
                applied: replicas.filter { $0.status == .ok }.count, unknown: unknown, error: merged?.message)
        }
    }

    /// Whether some store took part and every one succeeded. A dispatch no store handled did not succeed: see
    /// ``isUnhandled``.
    public var succeeded: Bool {
        guard !outcomes.isEmpty else { return false }
        // Every replica `ok` is the usual answer, and makes every store `ok`: found without building the summaries,
        // which cost a few thousand instructions on the path of every dispatch a caller checks (issue 17).
        if outcomes.indices.allSatisfy({ outcomes[$0].status == .ok }) { return true }
        return stores.allSatisfy { $0.status == .ok }
    }

    /// Whether no store handled the action when it was dispatched: none on the bus handled its type (stores that
    /// handle it but cannot run show as `skipped`, "not ready"). The action is in the log under its sequence. No store
    /// on the bus then ever applies it; a store that joins the bus later and handles its type builds its state from
    /// it (docs/GUIDE.md, "Stores that join late").
    public var isUnhandled: Bool { outcomes.isEmpty }

    /// Whether some store's outcome is not known yet: its replicas did not answer in time. They apply the action
    /// when they return or catch up; the same request id asked again shows the outcome once one reports.
    public var isUnknown: Bool { stores.contains { $0.status == .unknown } }

    /// `ok`, `unknown` (some store's outcome is not known yet), `unhandled` (no store handled it when it was
    /// dispatched; a store that joins later and handles its type builds its state from it), or `failed` (a
    /// store failed or was skipped).
    public var verdict: String { succeeded ? "ok" : isUnknown ? "unknown" : isUnhandled ? "unhandled" : "failed" }
}
