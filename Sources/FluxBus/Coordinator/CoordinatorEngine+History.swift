import FluxBusProtocol
import Logging

/// A store's history: a store first seen after actions were dispatched replays the retained log of the types it
/// handles, as an event-sourced projection does (docs/PROTOCOL.md, "A store's history").
extension CoordinatorEngine {
    /// Records the stores of a HELLO the log has never seen, each with the history it replays: every dispatch completed
    /// before now, from the oldest the log still holds. Recorded once and durably, so that every replica of the store,
    /// now or after a restart, replays the same entries. Only completed dispatches: one in flight (or planned) now may
    /// reach the store's worker as a live ACTION whose plan does not name the store, so it is not history, and its
    /// answer says the store skipped it (``joinedLateOutcomes(of:)``).
    func rememberStores(of hello: Message.Hello) {
        for store in hello.stores where log.histories[store.name] == nil {
            let history = StoreHistory(from: log.oldestRetained, before: lastCompleted + 1)
            log.rememberStore(store.name, history: history)
            guard !history.isEmpty else { continue }
            var metadata: Logger.Metadata = ["store": "\(store.name)", "before": "\(history.before)", "from": "\(history.from)"]
            if history.lacksStart {
                metadata["missing"] = "1…\(history.from - 1)"
                logger.warning(
                    "new store: its history starts at sequence \(history.from), not 1, because the log was compacted before it joined; it replays what the log still holds",
                    metadata: metadata)
            } else {
                logger.info("new store: it replays the history of the action types it handles", metadata: metadata)
            }
        }
        // After the stores' rows, which the declarations update; the log writes one only when it changed.
        for store in hello.stores {
            var declaration = store
            declaration.lastApplied = 0
            log.recordDeclaration(declaration)
        }
    }

    /// The entries as a worker replays them: each store it hosts gains a step in every entry of its history, so that
    /// it applies the actions dispatched before it was on the bus. Clients get the entries as logged.
    func withHistories(_ entries: [ReplayEntry], for routingID: [UInt8]) -> [ReplayEntry] {
        guard let first = entries.first?.sequence else { return entries }
        let replaying = histories(from: first, for: routingID)
        guard !replaying.isEmpty else { return entries }
        return entries.map { entry in
            var extended = entry
            for (store, history) in replaying where history.covers(entry, for: store) {
                extended.plan.append(StoreHistory.step(for: store, in: entry))
            }
            return extended
        }
    }

    /// The histories of the stores hosted behind `routingID` that reach past `sequence`: none for a client, and none,
    /// nearly always, for a worker, whose entries are then served as logged.
    func histories(from sequence: UInt64, for routingID: [UInt8]) -> [(StoreDeclaration, StoreHistory)] {
        guard let workerID = workerByRoutingID[routingID], let hosted = membership.workers[workerID]?.stores else { return [] }
        return hosted.compactMap { store in log.histories[store.name].map { (store, $0) } }
            .filter { $0.1.before > sequence && !$0.1.isEmpty }
    }

    /// Declared stores that handle the action and are neither planned nor listed not ready: they joined while it was
    /// in flight (its plan was made before they were known). They never apply it, not even as history, and the answer
    /// says so rather than leaving the action to read as unhandled.
    func joinedLateOutcomes(of flight: InFlightDispatch) -> [Outcome] {
        let type = flight.action.actionType
        // Runs for every completed action, a batch's too: a plan names a few stores, so a scan beats building a set.
        func named(_ store: String) -> Bool {
            flight.plan.contains { $0.store == store } || flight.notReady.contains { $0.store == store }
        }
        // Usually every store that handles the type is named: one pass over the stores, no ordering.
        guard membership.stores.values.contains(where: { $0.handles(type) && !named($0.declaration.name) }) else {
            return []
        }
        return membership.storesInOrder.filter { $0.handles(type) && !named($0.declaration.name) }.map {
            Outcome(
                store: $0.declaration.name, worker: "", status: .skipped,
                message: "joined the bus while this dispatch was in flight: it does not apply it, and its history ends before it",
                digest: 0)
        }
    }
}
