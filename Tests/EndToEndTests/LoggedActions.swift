import GRDB

/// The actions a coordinator's log holds, read with SQL as an operator reads them (docs/OPERATIONS.md, section 9):
/// DISPATCH's in `action`, a row each, and a batch's in `action_run`, a row per run from `first` through `last`,
/// with whether each completed (an `outcome` row covers its sequence).
enum LoggedActions {
    static let sql = """
        WITH RECURSIVE runs(sequence, last, requestID) AS (
            SELECT first, last, requestID FROM action_run
            UNION ALL SELECT sequence + 1, last, requestID FROM runs WHERE sequence < last)
        SELECT logged.sequence AS sequence, logged.requestID AS requestID,
            EXISTS (SELECT 1 FROM outcome o WHERE logged.sequence BETWEEN o.sequence AND o.last) AS done
        FROM (SELECT sequence, requestID FROM action UNION ALL SELECT sequence, requestID FROM runs) logged
        ORDER BY logged.sequence
        """

    static func rows(_ db: Database) throws -> [Row] { try Row.fetchAll(db, sql: sql) }
}
