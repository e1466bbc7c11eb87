import FluxBusProtocol
import Logging

/// A store new to the bus builds its state from the history (docs/PROTOCOL.md, "A store's history"): the coordinator
/// adds it to the REPLAY entries that completed before it first joined, with no recorded outcome of its own.
extension WorkerEngine {
    /// Tells the worker's log, once per store and process, that a hosted store replays history, and from where: the
    /// start of the bus, or, when the coordinator's log was compacted before the store joined, a later sequence.
    /// Takes the entry's fields rather than the entry: the caller reads them in place, uncopied.
    func noteHistory(sequence: UInt64, plan: [PlanStep], outputs: [StoreOutput]) {
        for step in plan where storesByName.hosts(step.store) && !outputs.contains(where: { $0.store == step.store }) {
            guard histories.announce(step.store) else { continue }
            let emptyAt = histories.emptyStarts[step.store] ?? 0
            var metadata: Logger.Metadata = ["store": "\(step.store)", "seq": "\(sequence)"]
            guard emptyAt > 0 else {
                logger.info(
                    "store new to the bus: building its state from the history of the actions it handles, dispatched before it joined (replayed, not acknowledged)",
                    metadata: metadata)
                continue
            }
            metadata["historyStartsAt"] = "\(emptyAt + 1)"
            metadata["missing"] = "1…\(emptyAt)"
            logger.warning(
                "store new to the bus: its history starts at sequence \(emptyAt + 1), not 1; the coordinator's log no longer holds the actions before it, so its state lacks what they did. It replays the rest",
                metadata: metadata)
        }
    }
}
