import Flux
import FluxBusProtocol

/// How far SNAPSHOTs brought the hosted stores. A store a snapshot brought to `S` does not run `S` or earlier again,
/// while the worker's own applied sequence is below `S`. Also the snapshots that came before their WELCOME, and each
/// store's state at start, which an empty snapshot ("the store did not exist yet") restores.
struct SnapshotProgress {
    /// Store → the sequence a snapshot brought it to, while that is beyond the worker's applied sequence.
    private var appliedThrough: [String: UInt64] = [:]
    /// The log chain at a sequence a snapshot brought a store to, as its SNAPSHOT gave it.
    private var chains: [UInt64: UInt64] = [:]
    /// Snapshots that arrived before their WELCOME, by store in arrival order; installed when a WELCOME of their epoch
    /// arrives. All are kept: one whose restored digest turns out wrong is refused then, and must not have displaced a
    /// sound one.
    private var held: [String: [Message.Snapshot]] = [:]
    /// Each store's state when the worker started, before any checkpoint.
    private let initialStates: [String: [UInt8]]

    init(stores: [AnyStore]) {
        var states: [String: [UInt8]] = [:]
        for store in stores { states[store.name] = try? store.encodedState() }
        initialStates = states
    }

    /// The sequence a snapshot (or a checkpoint that kept one's mark) brought `store` to, if beyond the worker's.
    func appliedThrough(_ store: String) -> UInt64? { appliedThrough[store] }

    /// Records that `store` has applied through `sequence`, and the log chain there when the snapshot said (not 0).
    mutating func mark(_ store: String, through sequence: UInt64, chain: UInt64 = 0) {
        appliedThrough[store] = sequence
        if chain != 0 { chains[sequence] = chain }
    }

    /// The log chain at `sequence`, if a snapshot brought a store there and said it.
    func chain(at sequence: UInt64) -> UInt64? { chains[sequence] }

    /// Whether `store` still runs dispatch `sequence`: not if a snapshot brought it that far.
    func runs(_ store: String, _ sequence: UInt64) -> Bool { appliedThrough[store].map { $0 < sequence } ?? true }

    /// The lowest sequence any of `stores` has applied through, one without a mark counting as `applied`: the
    /// worker's applied sequence may rise to it.
    func floor(of stores: [AnyStore], applied: UInt64) -> UInt64 {
        stores.map { appliedThrough[$0.name] ?? applied }.min() ?? applied
    }

    /// Drops the marks the worker's applied sequence has reached.
    mutating func forget(through applied: UInt64) {
        if !appliedThrough.isEmpty { appliedThrough = appliedThrough.filter { $0.value > applied } }
        if !chains.isEmpty { chains = chains.filter { $0.key > applied } }
    }

    /// The state an empty snapshot restores `store` to.
    func initialState(of store: String) -> [UInt8] { initialStates[store] ?? [] }

    /// Keeps a snapshot until its WELCOME arrives.
    mutating func hold(_ snapshot: Message.Snapshot) { held[snapshot.store, default: []].append(snapshot) }

    /// The snapshots held, by store name and then in arrival order, no longer held.
    mutating func takeHeld() -> [Message.Snapshot] {
        defer { held = [:] }
        return held.sorted { $0.key < $1.key }.flatMap(\.value)
    }
}
