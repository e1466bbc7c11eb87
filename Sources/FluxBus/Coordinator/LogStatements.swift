import GRDB
import GRDBSQLite

/// The log's statements on the hot paths (a dispatch's rows, its decisions and its transaction, a FETCH's entries),
/// each prepared once for the log's one connection. GRDB's `cachedStatement(sql:)` finds a statement by hashing its
/// SQL text, and its `write` parses `BEGIN` and `COMMIT` again for every transaction: for a lock-step dispatch's one
/// commit, that cost more than SQLite's own work on the rows.
///
/// Used only on the coordinator's thread, inside the connection's own calls (`writeWithoutTransaction`,
/// `inDatabase`); ``ActionLog`` drops them before its connection closes.
final class LogStatements {
    private var insertAction: Statement?
    private var insertActionRun: Statement?
    private var insertRequest: Statement?
    private var insertOutcome: Statement?
    private var insertPlan: Statement?
    private var upsertAnswer: Statement?
    private var insertDecision: Statement?
    private var selectEntries: Statement?
    private var selectSingles: Statement?
    private var selectRuns: Statement?
    private var updateJournal: Statement?
    private var begin: Statement?
    private var commit: Statement?
    private var rollback: Statement?
    /// The action type and origin the action statement holds bound from its last row: a batch's rows repeat them, and
    /// binding a text copies it, which cost more than the rest of the row's binding (``RowBinder/text(_:boundBefore:)``).
    var actionTypeBound: String?
    var originBound: String?

    static let insertActionSQL = """
        INSERT INTO action (sequence, epoch, actionType, payload, error, origin, requestID, batchFirst, batchSize, loggedAt, chain)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """
    static let insertActionRunSQL = """
        INSERT INTO action_run (first, last, epoch, origin, requestID, batchFirst, batchSize, loggedAt, actions)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
        """
    /// A request's row, with its answer when the same transaction holds it (``FoldedAnswers``), else with none yet.
    static let insertRequestSQL = """
        INSERT OR REPLACE INTO request (requestID, sequence, fingerprint, actionType, result) VALUES (?, ?, ?, ?, ?)
        """
    static let insertOutcomeSQL = "INSERT OR REPLACE INTO outcome (sequence, last, entry, completedAt) VALUES (?, ?, ?, ?)"
    static let insertPlanSQL = "INSERT OR REPLACE INTO plan (request, actionType, steps) VALUES (?, ?, ?)"
    static let upsertAnswerSQL = """
        INSERT INTO request (requestID, sequence, result) VALUES (?, ?, ?)
        ON CONFLICT (sequence) DO UPDATE SET result = excluded.result WHERE requestID = excluded.requestID
        """
    static let updateJournalSQL = "UPDATE journal SET generation = ?, counter = ? WHERE id = 0"
    static let insertDecisionSQL = "INSERT OR IGNORE INTO decision (sequence, store, status, message, output) VALUES (?, ?, ?, ?, ?)"
    /// The outcome rows covering a range of sequences, each a run from its sequence through `last` with the entry of
    /// its first: read from the one holding the range's first sequence, in key order (they do not overlap).
    static let selectEntriesSQL = """
        SELECT sequence, last, entry FROM outcome
        WHERE sequence >= COALESCE((SELECT MAX(sequence) FROM outcome WHERE sequence <= ?1), 0) AND sequence <= ?2
        ORDER BY sequence
        """

    func action(in db: Database) throws -> Statement {
        if insertAction == nil { (actionTypeBound, originBound) = (nil, nil) }
        return try prepared(&insertAction, Self.insertActionSQL, in: db)
    }
    func actionRun(in db: Database) throws -> Statement { try prepared(&insertActionRun, Self.insertActionRunSQL, in: db) }
    func request(in db: Database) throws -> Statement { try prepared(&insertRequest, Self.insertRequestSQL, in: db) }
    func outcome(in db: Database) throws -> Statement { try prepared(&insertOutcome, Self.insertOutcomeSQL, in: db) }
    func plan(in db: Database) throws -> Statement { try prepared(&insertPlan, Self.insertPlanSQL, in: db) }
    func answer(in db: Database) throws -> Statement { try prepared(&upsertAnswer, Self.upsertAnswerSQL, in: db) }
    func decision(in db: Database) throws -> Statement { try prepared(&insertDecision, Self.insertDecisionSQL, in: db) }
    func entries(in db: Database) throws -> Statement { try prepared(&selectEntries, Self.selectEntriesSQL, in: db) }
    func storedSingles(in db: Database) throws -> Statement { try prepared(&selectSingles, StoredActions.singlesSQL, in: db) }
    func storedRuns(in db: Database) throws -> Statement { try prepared(&selectRuns, StoredActions.runsSQL, in: db) }
    func journal(in db: Database) throws -> Statement { try prepared(&updateJournal, Self.updateJournalSQL, in: db) }

    /// Runs `body` in one transaction of `db`, which must have none open (a connection used through
    /// `writeWithoutTransaction`): committed when it returns, rolled back when it or the commit throws.
    func transaction(in db: Database, _ body: () throws -> Void) throws {
        try RowBinder(try prepared(&begin, "BEGIN", in: db)).run(in: db)
        do {
            try body()
            try RowBinder(try prepared(&commit, "COMMIT", in: db)).run(in: db)
        } catch {
            // A failed statement may have ended the transaction already (SQLite rolls back on some errors). The first
            // error is the one to report, as GRDB's own transactions do: a failed rollback would only hide it.
            if sqlite3_get_autocommit(db.sqliteConnection) == 0 {
                _ = try? RowBinder(try prepared(&rollback, "ROLLBACK", in: db)).run(in: db)
            }
            throw error
        }
    }

    /// Finalizes every statement, as the connection's close needs.
    func drop() {
        insertAction = nil
        insertActionRun = nil
        (actionTypeBound, originBound) = (nil, nil)
        insertRequest = nil
        insertOutcome = nil
        insertPlan = nil
        upsertAnswer = nil
        insertDecision = nil
        selectEntries = nil
        selectSingles = nil
        selectRuns = nil
        updateJournal = nil
        begin = nil
        commit = nil
        rollback = nil
    }

    private func prepared(_ slot: inout Statement?, _ sql: String, in db: Database) throws -> Statement {
        if let statement = slot { return statement }
        let statement = try db.makeStatement(sql: sql)
        slot = statement
        return statement
    }
}
