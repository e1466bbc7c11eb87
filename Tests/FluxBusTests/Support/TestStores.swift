import Flux
import FluxStores
import Foundation

// Stores written for the bus tests. Like the built-in ones, each is an ordinary `Store`: nothing in them knows
// whether a `Hub` or a worker runs them.

/// A store whose handler takes a while (it blocks its worker's thread), so that dispatches pile up behind it.
final class SlowStore: Store {
    struct Work: Codable, Sendable, Hashable {
        var n: Int
    }

    static let work = ActionType<Work>("slow.work")
    static let name = "slow"
    static let handlers = Handlers<SlowStore>()
        .on(work) { store, action, _ in
            Thread.sleep(forTimeInterval: 0.03)
            store.state.append(action.payload.n)
        }

    /// Every `n` it handled, in the order it handled them.
    var state: [Int] = []
    init() {}
}

/// A store that dispatches `counter.add` from inside its handler: a cascade.
final class RelayStore: Store {
    struct Ping: Codable, Sendable, Hashable {
        var by: Int
    }

    struct State: Codable, Sendable, Hashable {
        var pings = 0
    }

    static let ping = ActionType<Ping>("relay.ping")
    static let name = "relay"
    static let handlers = Handlers<RelayStore>()
        .on(ping) { store, action, context in
            store.state.pings += 1
            try context.dispatch(Action(CounterStore.add, .init(by: action.payload.by)))
        }

    var state = State()
    init() {}
}

/// An order book in four stores: `check` validates, `ledger` waits for `check`, `report` waits for `ledger`, and
/// `audit` waits for nothing.
enum Orders {
    struct Place: Codable, Sendable, Hashable {
        var qty: Int
    }

    static let place = ActionType<Place>("order.place")
}

/// Refuses a non-positive quantity by throwing; publishes the last valid quantity.
final class CheckStore: Store {
    struct State: Codable, Sendable, Hashable {
        var lastQty: Int?
    }

    static let name = "check"
    static let handlers = Handlers<CheckStore>()
        .on(Orders.place) { store, action, _ in
            guard action.payload.qty > 0 else {
                throw ActionError("quantity must be positive, got \(action.payload.qty)")
            }
            store.state.lastQty = action.payload.qty
        }

    var state = State()
    init() {}
    func output() -> State? { state }
}

/// Adds up the quantities that `check` let through, read from its output.
final class LedgerStore: Store {
    struct State: Codable, Sendable, Hashable {
        var total = 0
        var entries = 0
    }

    static let name = "ledger"
    static let dependencies = [CheckStore.name]
    static let handlers = Handlers<LedgerStore>()
        .on(Orders.place) { store, _, context in
            guard let qty = try context.output(of: CheckStore.name, as: CheckStore.State.self)?.lastQty else {
                throw ActionError("check published no quantity")
            }
            store.state.total += qty
            store.state.entries += 1
        }

    var state = State()
    init() {}
    func output() -> State? { state }
}

/// Copies the ledger's total, read from its output.
final class ReportStore: Store {
    struct State: Codable, Sendable, Hashable {
        var total = 0
    }

    static let name = "report"
    static let dependencies = [LedgerStore.name]
    static let handlers = Handlers<ReportStore>()
        .on(Orders.place) { store, _, context in
            guard let ledger = try context.output(of: LedgerStore.name, as: LedgerStore.State.self) else {
                throw ActionError("ledger published nothing")
            }
            store.state.total = ledger.total
        }

    var state = State()
    init() {}
}

/// Counts every order, valid or not; it waits for nothing.
final class AuditStore: Store {
    struct State: Codable, Sendable, Hashable {
        var orders = 0
    }

    static let name = "audit"
    static let handlers = Handlers<AuditStore>()
        .on(Orders.place) { store, _, _ in store.state.orders += 1 }

    var state = State()
    init() {}
}

/// Records every note with the error its action carried, if any: Flux actions may carry an error.
final class JournalStore: Store {
    struct Note: Codable, Sendable, Hashable {
        var text: String
    }

    static let note = ActionType<Note>("journal.note")
    static let name = "journal"
    static let handlers = Handlers<JournalStore>()
        .on(note) { store, action, _ in
            store.state.append(action.error.map { "\(action.payload.text) (error: \($0.message))" } ?? action.payload.text)
        }

    var state: [String] = []
    init() {}
}
