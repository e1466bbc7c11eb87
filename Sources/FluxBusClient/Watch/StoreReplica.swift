import Flux
import FluxBusProtocol

/// A replica of one store inside a client: seeded from a live replica's state, then brought forward by the history's
/// entries exactly as a worker replaying them does (`LocalDispatch` with `isReplay`): the store runs when it is in
/// the plan, unless a dependency's recorded outcome blocks it, and reads its dependencies' recorded outputs.
///
/// It never acknowledges and never cascades: the dispatch it replays has completed on the bus, cascades included.
final class StoreReplica {
    /// What applying one entry did to the store here.
    enum Run: Equatable {
        /// The store is not in the entry's plan.
        case notPlanned
        /// A dependency's recorded outcome kept it from running, as on every replica.
        case skipped
        /// Its handler ran and returned.
        case ok
        /// Its handler threw.
        case failed(String)
        /// The action is marked poisoned for the store: no replica runs it.
        case poisoned
    }

    let store: AnyStore
    /// The last sequence the state includes.
    private(set) var sequence: UInt64 = 0

    init(_ store: AnyStore) { self.store = store }

    /// Replaces the state with a live replica's, as at `sequence`.
    func seed(json: [UInt8], at sequence: UInt64) throws {
        try store.restore(fromJSON: json)
        self.sequence = sequence
    }

    /// Moves past a dispatch that did not plan the store: its COMPLETED said so, and nothing here changes.
    func pass(_ next: UInt64) {
        precondition(next == sequence + 1, "a replica passes sequences in order")
        sequence = next
    }

    /// Moves past an entry marked poisoned for the store, as every replica does: its state does not change.
    func skipPoisoned(_ entry: ReplayEntry) -> Run {
        precondition(entry.sequence == sequence + 1, "a replica applies entries in order")
        sequence = entry.sequence
        return .poisoned
    }

    /// Applies the entry that follows ``sequence``.
    func apply(_ entry: ReplayEntry) -> Run {
        precondition(entry.sequence == sequence + 1, "a replica applies entries in order")
        sequence = entry.sequence
        guard entry.plan.contains(where: { $0.store == store.name }) else { return .notPlanned }
        // The plan's run with this store the only one here: every other store settles by its recorded outcome, and
        // one the record lacks counts as lost, as a worker's replay has it.
        var execution = DependencyExecution(
            entry.plan.map { DependencyExecution.Step(store: $0.store, waitsFor: $0.waitsFor) },
            runsHere: { $0 == self.store.name })
        var outputs: [String: Value] = [:]
        for output in entry.outputs where output.store != store.name {
            if execution.record(output.store, output.settlement), let bytes = output.output { outputs[output.store] = .encoded(bytes) }
        }
        for step in execution.plan where step.store != store.name { execution.record(step.store, .lost("not in the recorded history")) }
        guard let ready = execution.nextRunnable() else { return .skipped }
        if ready.blockedBy != nil { return .skipped }
        let context = DispatchContext(
            sequence: entry.sequence, store: store.name, dependencies: store.dependencies,
            outputs: outputs.filter { ready.step.waitsFor.contains($0.key) }, cascade: { _ in })
        let action = AnyAction(name: entry.actionType, json: entry.payload, error: entry.error.map(ActionError.init))
        do {
            _ = try store.apply(action, context: context)
            return .ok
        } catch {
            return .failed(ActionError(describing: error).message)
        }
    }

    /// The state's digest as a worker computes it (docs/PROTOCOL.md, Appendix A).
    func digest() -> UInt64 {
        store.maintainedDigest() ?? (try? store.encodedState()).map(StateDigest.fnv1a64) ?? 0
    }
}
