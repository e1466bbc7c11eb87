import FluxBusProtocol

/// The history a store replays because its first replica joined after actions were dispatched (docs/PROTOCOL.md,
/// "A store's history"): the dispatches from ``from`` up to, not including, ``before``, which had all completed when
/// the coordinator first saw the store. Recorded once, when the store is first seen, so that every replica of the
/// store, now or later, replays the same entries.
struct StoreHistory: Hashable, Sendable {
    /// The first sequence the log held when the store was first seen: 1 when it held the whole history.
    let from: UInt64
    /// One more than the last sequence completed when the store was first seen. 0 for a store from a log older than
    /// histories (it replays none), 1 for a store that joined before any dispatch completed.
    let before: UInt64

    /// No history: a store known before histories were recorded.
    static let none = StoreHistory(from: 0, before: 0)

    /// Whether there is anything before ``before`` to replay.
    var isEmpty: Bool { before <= 1 }

    /// Whether the start of the bus's history was compacted away before the store first joined.
    var lacksStart: Bool { !isEmpty && from > 1 }

    /// Whether the store replays this entry as history: it completed before the store was known, and the store
    /// handles its type. (Its plan cannot name the store; the check keeps a store from running an entry twice anyway.)
    func covers(_ entry: ReplayEntry, for store: StoreDeclaration) -> Bool {
        entry.sequence < before
            && (store.handlesAll || store.handles.contains(entry.actionType))
            && !entry.plan.contains { $0.store == store.name }
    }

    /// The plan step a history entry gains for `store`: it waits for its dependencies that have a recorded outcome in
    /// the entry (they ran it live), and reads no output of the others, as for a dependency that does not handle the
    /// type live.
    static func step(for store: StoreDeclaration, in entry: ReplayEntry) -> PlanStep {
        let recorded = Set(entry.outputs.map(\.store)).intersection(entry.plan.map(\.store))
        return PlanStep(store: store.name, waitsFor: store.dependsOn.filter(recorded.contains))
    }
}

extension StoreStatus {
    /// The status with the store's history, when it replayed one.
    func withHistory(_ history: StoreHistory) -> StoreStatus {
        guard !history.isEmpty else { return self }
        var status = self
        status.historyFrom = history.from
        status.historyBefore = history.before
        return status
    }
}
