import Flux
import FluxBusProtocol
@testable import FluxBus

/// The independent stores' histories as the total order gives them: the ids each holds in sequence order, and how
/// many it holds through each sequence. The checker holds every replica, and every digest it reports, to these.
struct SimHistoryModel {
    /// The last sequence the model covers.
    private(set) var through: UInt64 = 0
    /// Ids the ledger's handler traps on: poisoned for it, never applied by any replica.
    var ledgerTraps: Set<UInt32> = []
    private(set) var ledger: [UInt32] = []
    private(set) var tally: [UInt32] = []
    /// How many ids each store holds through sequence `n` (index `n`).
    private(set) var ledgerCount: [Int] = [0]
    private(set) var tallyCount: [Int] = [0]
    /// The history each store replays, as the coordinator's log recorded it when it first saw the store: a store also
    /// applies every sequence from `from` up to `before` whose plan does not name it (every simulated action is one
    /// it handles). When a store's history is first recorded, the model is worked out again from sequence 1.
    private(set) var histories: [String: StoreHistory] = [:]

    /// Extends the model through `sequence` from what was published; false if a sequence up to it never was.
    mutating func extend(
        through sequence: UInt64, order: [UInt64: UInt32], planned: [UInt64: Set<String>], histories: [String: StoreHistory]
    ) -> Bool {
        if histories != self.histories {
            self = SimHistoryModel(ledgerTraps: ledgerTraps, histories: histories)
        }
        while through < sequence {
            guard let id = order[through + 1], let stores = planned[through + 1] else { return false }
            through += 1
            if applies(SimLedger.name, through, stores), !Sim.ledgerRefuses(id), !ledgerTraps.contains(id) { ledger.append(id) }
            if applies(SimTally.name, through, stores) { tally.append(id) }
            ledgerCount.append(ledger.count)
            tallyCount.append(tally.count)
        }
        return true
    }

    /// Works the model out again from sequence 1 at the next ``extend(through:order:planned:histories:)``: what it
    /// covered after a lost commit may be published as other actions.
    mutating func restart() {
        self = SimHistoryModel(ledgerTraps: ledgerTraps, histories: histories)
    }

    private init(ledgerTraps: Set<UInt32>, histories: [String: StoreHistory]) {
        self.ledgerTraps = ledgerTraps
        self.histories = histories
    }

    init() {}

    /// Whether `store` applies `sequence`: planned there, or replaying it as its history.
    private func applies(_ store: String, _ sequence: UInt64, _ planned: Set<String>) -> Bool {
        if planned.contains(store) { return true }
        guard let history = histories[store] else { return false }
        return sequence >= history.from && sequence < history.before
    }

    /// The ids `store` (the ledger or the tally) holds through `sequence`, which the model must cover.
    func history(of store: String, through sequence: UInt64) -> ArraySlice<UInt32> {
        store == SimLedger.name ? ledger[..<ledgerCount[Int(sequence)]] : tally[..<tallyCount[Int(sequence)]]
    }

    /// The digest a replica of `store` must report through `sequence`: the ledger's from its whole state, the
    /// tally's as its state keeps it; nil for another store.
    func digest(of store: String, through sequence: UInt64) -> UInt64? {
        switch store {
        case SimLedger.name: StateDigest.fnv1a64(try! JSONCoding.encode(Array(history(of: store, through: sequence))))
        case SimTally.name: TallyState(Array(history(of: store, through: sequence))).stateDigest
        default: nil
        }
    }
}
