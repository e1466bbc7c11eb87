import FluxBus
import FluxBusProtocol

/// How `fluxbus tail` shows one completed dispatch, live (COMPLETED) or from history (REPLAY).
public enum TailView {
    /// `tail --json`: one object per line.
    public struct JSON: Codable, Sendable, Hashable {
        public let seq: UInt64
        public let epoch: UInt64
        public let action: String
        /// Store → its recorded outcome: `ok`, `failed`, `skipped` or `unknown`.
        public let stores: [String: String]
        public let errors: [String: String]
        /// Missing for dispatches read from history.
        public let elapsedMicros: UInt64?
    }

    public static func json(_ completed: Message.Completed) -> JSON {
        let result = DispatchResult(.init(requestID: "", epoch: completed.epoch, sequence: completed.sequence,
                                          elapsedMicros: completed.elapsedMicros, outcomes: completed.outcomes))
        return JSON(
            seq: completed.sequence, epoch: completed.epoch, action: completed.actionType,
            stores: Dictionary(uniqueKeysWithValues: result.stores.map { ($0.name, $0.status.description) }),
            errors: Dictionary(uniqueKeysWithValues: result.stores.compactMap { store in store.error.map { (store.name, $0) } }),
            elapsedMicros: completed.elapsedMicros)
    }

    /// An entry from the history; a store the action is marked poisoned for shows `poisoned` and the mark's reason
    /// in place of the outcome recorded at completion.
    public static func json(_ entry: ReplayEntry, poisoned: [PoisonMark] = []) -> JSON {
        var stores = Dictionary(uniqueKeysWithValues: entry.outputs.map { ($0.store, $0.status.description) })
        var errors = Dictionary(uniqueKeysWithValues: entry.outputs.filter { !$0.message.isEmpty }.map { ($0.store, $0.message) })
        for mark in poisoned where mark.sequence == entry.sequence {
            stores[mark.store] = OutcomeStatus.poisoned.description
            errors[mark.store] = mark.reason
        }
        return JSON(seq: entry.sequence, epoch: entry.epoch, action: entry.actionType, stores: stores, errors: errors, elapsedMicros: nil)
    }

    public static func text(_ view: JSON) -> String {
        let stores = view.stores.keys.sorted().map { name in
            "\(name) \(view.stores[name]!)" + (view.errors[name].map { " (\($0))" } ?? "")
        }
        return "#\(view.seq) \(view.action): " + (stores.isEmpty ? "no store" : stores.joined(separator: ", "))
            + (view.elapsedMicros.map { "  \(ResultView.duration(micros: $0))" } ?? "  (history)")
    }
}
