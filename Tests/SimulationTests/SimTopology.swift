import Flux

/// Which stores each simulated worker hosts.
struct SimTopology {
    let stores: [[any Store.Type]]

    /// Two replicas of each store, and every replica of the audit store on a worker without the ledger: each
    /// dependent learns the ledger's outcome from the coordinator's RELEASE.
    static let remoteDependents = SimTopology(stores: [
        [SimLedger.self, SimTally.self], [SimLedger.self], [SimAudit.self, SimTally.self], [SimAudit.self],
    ])

    /// One audit replica beside a ledger replica, resolving the dependency locally, and one remote.
    static let colocatedDependent = SimTopology(stores: [
        [SimLedger.self, SimTally.self], [SimLedger.self, SimAudit.self], [SimAudit.self, SimTally.self],
    ])

    /// The audit store with no ledger anywhere: it waits for a store nobody hosts, so it is never planned, and every
    /// answer must say it was not ready.
    static let missingDependency = SimTopology(stores: [[SimAudit.self, SimTally.self], [SimTally.self]])

    /// Two ledgers, and two tallies that no other worker hosts, on workers a scenario starts late: the tally is new to
    /// the bus when it first joins, and builds its state from the history.
    static let lateTally = SimTopology(stores: [[SimLedger.self], [SimLedger.self], [SimTally.self], [SimTally.self]])

    /// Two tallies, and two ledgers on workers a scenario starts late: the ledger replays its history, traps included.
    static let lateLedger = SimTopology(stores: [[SimTally.self], [SimTally.self], [SimLedger.self], [SimLedger.self]])
}
