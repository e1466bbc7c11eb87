import GRDB

/// The log's statements on the hot paths (a dispatch's rows, a FETCH's entries), each prepared once for the log's one
/// connection. GRDB's `cachedStatement(sql:)` finds a statement by hashing its SQL text, and for a batched action's
/// two rows that hashing cost more than binding them.
///
/// Used only on the coordinator's thread, inside the connection's own calls (`write`, `inDatabase`); ``ActionLog``
/// drops them before its connection closes.
final class LogStatements {
    private var insertAction: Statement?
    private var insertRequest: Statement?
    private var insertOutcome: Statement?
    private var selectEntries: Statement?

    static let insertActionSQL = """
        INSERT INTO action (sequence, epoch, actionType, payload, error, origin, requestID, batchFirst, batchSize, loggedAt, chain)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """
    static let insertRequestSQL = "INSERT OR REPLACE INTO request (requestID, sequence, fingerprint, actionType) VALUES (?, ?, ?, ?)"
    static let insertOutcomeSQL = "INSERT OR REPLACE INTO outcome (sequence, entry, completedAt) VALUES (?, ?, ?)"
    static let selectEntriesSQL = """
        SELECT o.entry, a.payload FROM outcome o JOIN action a ON a.sequence = o.sequence
        WHERE o.sequence BETWEEN ? AND ? ORDER BY o.sequence LIMIT ?
        """

    func action(in db: Database) throws -> Statement { try prepared(&insertAction, Self.insertActionSQL, in: db) }
    func request(in db: Database) throws -> Statement { try prepared(&insertRequest, Self.insertRequestSQL, in: db) }
    func outcome(in db: Database) throws -> Statement { try prepared(&insertOutcome, Self.insertOutcomeSQL, in: db) }
    func entries(in db: Database) throws -> Statement { try prepared(&selectEntries, Self.selectEntriesSQL, in: db) }

    /// Finalizes every statement, as the connection's close needs.
    func drop() {
        insertAction = nil
        insertRequest = nil
        insertOutcome = nil
        selectEntries = nil
    }

    private func prepared(_ slot: inout Statement?, _ sql: String, in db: Database) throws -> Statement {
        if let statement = slot { return statement }
        let statement = try db.makeStatement(sql: sql)
        slot = statement
        return statement
    }
}
