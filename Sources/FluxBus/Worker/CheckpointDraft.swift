import Flux
import Foundation
import FluxBusProtocol

/// A checkpoint taken on the worker's I/O thread between dispatches, with each store's state as a copy-on-write copy
/// (O(1)) rather than bytes: encoding a large state and writing it to disk happen on another thread, so a checkpoint
/// never holds up dispatches or heartbeats, whatever the size of the state.
struct CheckpointDraft: Sendable {
    struct Store: Sendable {
        let name: String
        let appliedThrough: UInt64?
        let state: StoreStateCopy
    }

    let worker: String
    let lastApplied: UInt64
    let chain: UInt64?
    let appliedEpoch: UInt64
    let stores: [Store]
    /// As remembered: a batch in flight may leave thousands, converted with the states, off the worker's I/O thread.
    let acknowledged: [(sequence: UInt64, results: [StoreResult])]

    /// The checkpoint as the file holds it: every state encoded, with its checksum. Safe on any thread.
    /// - Throws: the encoding error of a state that cannot be encoded.
    func encoded() throws -> Checkpoint {
        let states = try stores.map { store in
            let bytes = try store.state.encoded()
            return Checkpoint.StoreState(
                name: store.name, appliedThrough: store.appliedThrough, digest: StateDigest.fnv1a64(bytes), state: Data(bytes))
        }
        return Checkpoint(
            worker: worker, lastApplied: lastApplied, chain: chain, appliedEpoch: appliedEpoch == 0 ? nil : appliedEpoch,
            stores: states,
            acknowledged: acknowledged.map { .init(sequence: $0.sequence, results: $0.results.map(Checkpoint.Result.init)) })
    }
}
