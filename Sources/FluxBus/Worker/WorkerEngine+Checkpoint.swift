import Flux
import Foundation
import FluxBusProtocol
import Logging

/// Keeping and resuming from a checkpoint (`--data-dir`). Everything here runs on the worker's I/O thread, between
/// handler runs, so the states it writes are never torn by a dispatch.
extension WorkerEngine {
    /// How many applied sequences' results a checkpoint keeps at least, to re-acknowledge after a restart. It keeps
    /// more when more were applied since the last sequence the coordinator said completed: a batch in flight can
    /// hold thousands, and a coordinator restarted with it asks for each of them again.
    static let checkpointAcknowledgements = 64

    /// The checkpoint of the worker as it stands, its states as copies to encode elsewhere, or nil while a dispatch
    /// is in hand: then some stores' states include it and others do not, and `lastApplied` says neither.
    func checkpoint() -> CheckpointDraft? {
        guard current == nil else { return nil }
        let notCompleted = lastApplied > catchUp.knownCompleted ? lastApplied - catchUp.knownCompleted : 0
        return CheckpointDraft(
            worker: id, lastApplied: lastApplied, chain: chain, appliedEpoch: appliedEpoch,
            stores: stores.map { .init(name: $0.name, appliedThrough: snapshots.appliedThrough($0.name), state: $0.takeStateCopy()) },
            acknowledged: acknowledged.recent(max(Self.checkpointAcknowledgements, Int(clamping: notCompleted)), through: lastApplied))
    }

    /// Asks the shell to write the checkpoint if something changed since the last one and no dispatch is in hand.
    func writeCheckpointIfStale() {
        guard keepsCheckpoint, checkpointStale, let checkpoint = checkpoint() else { return }
        checkpointStale = false
        pendingCheckpoint(checkpoint)
    }

    /// The shell could not write the checkpoint, or was still writing the last one: the previous one stands, and the
    /// next interval tries again.
    func checkpointWriteFailed() {
        checkpointStale = true
    }

    /// Restores the stores' states, `lastApplied` and the remembered results from a checkpoint, before joining.
    /// - Throws: ``BusError`` (`usage`) naming the file when the checkpoint is of another worker or other stores, or
    ///   a state in it is damaged. The worker never starts empty in its place.
    func resume(from checkpoint: Checkpoint, file: CheckpointFile) throws(BusError) {
        guard checkpoint.worker == id else {
            throw BusError(code: .usage, message: "the checkpoint \(file.path) is of worker `\(checkpoint.worker)`, not `\(id)`; \(file.remedy)")
        }
        let configured = stores.map(\.name).sorted()
        let saved = checkpoint.stores.map(\.name).sorted()
        guard saved == configured else {
            throw BusError(
                code: .usage,
                message: "the checkpoint \(file.path) holds stores \(saved.joined(separator: ", ")), but this worker hosts "
                    + "\(configured.joined(separator: ", ")); host the same stores, or \(file.remedy)")
        }
        for saved in checkpoint.stores {
            let bytes = [UInt8](saved.state)
            guard StateDigest.fnv1a64(bytes) == saved.digest else {
                throw BusError(code: .usage, message: "the checkpoint \(file.path) is corrupt (the state of store `\(saved.name)` does not match its digest); \(file.remedy)")
            }
            do {
                try storesByName[saved.name]!.restore(fromJSON: bytes)
            } catch {
                throw BusError(code: .usage, message: "the checkpoint \(file.path) holds a state of store `\(saved.name)` that does not decode (\(error)); \(file.remedy)")
            }
            if let through = saved.appliedThrough, through > checkpoint.lastApplied { snapshots.mark(saved.name, through: through) }
        }
        lastApplied = checkpoint.lastApplied
        chain = checkpoint.chain ?? (checkpoint.lastApplied == 0 ? 0 : nil)
        appliedEpoch = checkpoint.appliedEpoch ?? 0
        for saved in checkpoint.acknowledged.sorted(by: { $0.sequence < $1.sequence }) {
            acknowledged.remember(saved.sequence, saved.results.compactMap(\.storeResult))
        }
        emit(.resumed(sequence: lastApplied))
        logger.notice("resumed from the checkpoint", metadata: [
            "file": "\(file.path)", "seq": "\(lastApplied)", "acknowledgements": "\(checkpoint.acknowledged.count)",
        ])
    }
}
