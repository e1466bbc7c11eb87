import Flux

// The simulated bus's stores. Their states are histories, so order, loss and duplicates all show: a replica's state
// must equal what the total order of completed actions says it should, entry for entry.

enum Sim {
    struct Append: Codable, Sendable, Hashable {
        var id: UInt32
    }

    /// Every simulated action: append an id.
    static let append = ActionType<Append>("sim.append")

    /// The ledger's handler throws for these ids: a handler that fails, deterministically on every replica.
    static func ledgerRefuses(_ id: UInt32) -> Bool { id % 11 == 7 }
}

/// Appends every id it handles, except those it refuses; tells dependents how long it is now.
final class SimLedger: Store {
    struct Output: Codable, Sendable, Hashable {
        var count: Int
    }

    static let name = "ledger"
    static let handlers = Handlers<SimLedger>()
        .on(Sim.append) { store, action, _ in
            guard !Sim.ledgerRefuses(action.payload.id) else { throw ActionError("id \(action.payload.id) refused") }
            store.state.append(action.payload.id)
        }

    var state: [UInt32] = []
    init() {}
    func output() -> Output { Output(count: state.count) }
}

/// Waits for the ledger and appends the ledger's length as its output reported it: a dependent that read a stale or
/// missing output shows it.
final class SimAudit: Store {
    static let name = "audit"
    static let dependencies = ["ledger"]
    static let handlers = Handlers<SimAudit>()
        .on(Sim.append) { store, _, context in
            guard let ledger = try context.output(of: "ledger", as: SimLedger.Output.self) else {
                throw ActionError("no output from the ledger")
            }
            store.state.append(ledger.count)
        }

    var state: [Int] = []
    init() {}
}

/// Independent of the others: appends every id, so it still runs when the ledger fails. Its state keeps its own
/// digest, as a large map's does, so the simulation holds a kept digest to the one the history gives.
final class SimTally: Store {
    static let name = "tally"
    static let handlers = Handlers<SimTally>()
        .on(Sim.append) { store, action, _ in store.state.append(action.payload.id) }

    var state = TallyState()
    init() {}
}

/// The ids in order, with a ``MapDigest`` kept member by member (`index:id`): on the wire, the plain array.
struct TallyState: Codable, Sendable, Hashable, DigestedState {
    private(set) var ids: [UInt32] = []
    private var digest = MapDigest()

    init(_ ids: [UInt32] = []) {
        for id in ids { append(id) }
    }

    mutating func append(_ id: UInt32) {
        digest.insert(member: Array("\(ids.count):\(id)".utf8))
        ids.append(id)
    }

    var stateDigest: UInt64 { digest.value }

    init(from decoder: any Decoder) throws {
        self.init(try decoder.singleValueContainer().decode([UInt32].self))
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(ids)
    }
}
