import FluxBusProtocol
import GRDB
import GRDBSQLite

/// The actions a SQLite log holds in a range of sequences, oldest first, from both tables that hold them: `action`,
/// a row each (every DISPATCH's, and a batch's in a log from before v12), and `action_run`, a row per run of a batch's
/// actions (``ActionRun``). Steps both statements through SQLite's C API and merges them by sequence; each action's
/// fields are read in place, and ``Action`` is valid only until the next ``next()``.
///
/// Used inside one call of the log's connection (`inDatabase`), which must outlive it; ``finish()`` resets both
/// statements, and must be called however the reading ends.
struct StoredActions {
    /// One action, read in place from its row.
    struct Action {
        let sequence: UInt64
        let epoch: UInt64
        /// Nil for a row from before chains (v2).
        let chain: UInt64?
        /// Empty for an action without one.
        let requestID: String
        let batchFirst: UInt64?
        let batchSize: Int
        let actionType: UnsafeBufferPointer<UInt8>
        let payload: UnsafeBufferPointer<UInt8>
        /// Nil when the action carries no error.
        let error: UnsafeBufferPointer<UInt8>?

        var type: String { String(decoding: actionType, as: UTF8.self) }
        var batchAction: BatchAction {
            BatchAction(actionType: type, payload: Array(payload), error: error.map { String(decoding: $0, as: UTF8.self) })
        }
    }

    static let singlesSQL = """
        SELECT sequence, epoch, actionType, payload, error, requestID, batchFirst, batchSize, chain FROM action
        WHERE sequence BETWEEN ?1 AND ?2 ORDER BY sequence
        """
    /// From the run holding the range's first sequence, in key order: runs do not overlap.
    static let runsSQL = """
        SELECT first, last, epoch, requestID, batchFirst, batchSize, actions FROM action_run
        WHERE first >= COALESCE((SELECT MAX(first) FROM action_run WHERE first <= ?1), 0) AND first <= ?2 ORDER BY first
        """

    private let singles: SQLiteStatement
    private let runs: SQLiteStatement
    private let range: ClosedRange<UInt64>
    /// The next row of each statement, once stepped; nil when it has none left.
    private var single: Bool
    private var run: RunCursor?

    /// The run row being read: its shared fields and where its next action starts in its bytes.
    private struct RunCursor {
        let first: UInt64
        let last: UInt64
        let epoch: UInt64
        let requestID: String
        let batchFirst: UInt64
        let batchSize: Int
        let bytes: UnsafeBufferPointer<UInt8>
        var next: UInt64
        var offset = 0
    }

    init(_ db: Database, statements: LogStatements, in range: ClosedRange<UInt64>) throws {
        singles = try statements.storedSingles(in: db).sqliteStatement
        runs = try statements.storedRuns(in: db).sqliteStatement
        self.range = range
        for statement in [singles, runs] {
            sqlite3_reset(statement)
            // SQLite's integers are signed: a range to the largest u64 reads to the largest it holds.
            sqlite3_bind_int64(statement, 1, Int64(clamping: range.lowerBound))
            sqlite3_bind_int64(statement, 2, Int64(clamping: range.upperBound))
        }
        single = try Self.step(singles, db)
        run = nil
        try advanceRun(db)
    }

    /// Resets both statements: a statement left mid-step would hold its read open.
    func finish() {
        sqlite3_reset(singles)
        sqlite3_reset(runs)
    }

    /// The next action in the range, or nil when there is none. The one before it is no longer valid.
    /// - Throws: ``LogDamage`` when a run's row does not hold the actions its first and last say.
    mutating func next(_ db: Database) throws -> Action? {
        // The statement the last action came from steps now, once nothing reads that action's row any more.
        if singleRead {
            singleRead = false
            single = try Self.step(singles, db)
        }
        if runEnded {
            runEnded = false
            run = nil
            try advanceRun(db)
        }
        let singleSequence = single ? UInt64(bitPattern: sqlite3_column_int64(singles, 0)) : nil
        if let sequence = run?.next, sequence <= range.upperBound, sequence <= (singleSequence ?? .max) {
            return try nextOfRun()
        }
        guard let sequence = singleSequence else { return nil }
        singleRead = true
        return Action(
            sequence: sequence, epoch: UInt64(bitPattern: sqlite3_column_int64(singles, 1)),
            chain: sqlite3_column_type(singles, 8) == SQLITE_NULL ? nil : UInt64(bitPattern: sqlite3_column_int64(singles, 8)),
            requestID: Self.text(singles, 5) ?? "",
            batchFirst: sqlite3_column_type(singles, 6) == SQLITE_NULL ? nil : UInt64(bitPattern: sqlite3_column_int64(singles, 6)),
            batchSize: Int(sqlite3_column_int64(singles, 7)), actionType: Self.bytes(singles, 2), payload: Self.bytes(singles, 3),
            error: sqlite3_column_type(singles, 4) == SQLITE_NULL ? nil : Self.bytes(singles, 4))
    }

    /// The last action came from `action` (which steps at the next call), or ended its run (whose row then does).
    private var singleRead = false
    private var runEnded = false

    private mutating func nextOfRun() throws -> Action {
        var cursor = run!
        var reader = ActionRun.Reader(bytes: cursor.bytes, first: cursor.first, offset: cursor.offset)
        let next = try reader.next()
        let action = Action(
            sequence: cursor.next, epoch: cursor.epoch, chain: next.chain, requestID: cursor.requestID, batchFirst: cursor.batchFirst,
            batchSize: cursor.batchSize, actionType: next.actionType, payload: next.payload, error: next.error)
        cursor.offset = reader.offset
        if cursor.next == cursor.last {
            try reader.finish(count: Int(cursor.last - cursor.first + 1))
            runEnded = true
        } else {
            cursor.next += 1
        }
        run = cursor
        return action
    }

    /// Moves to the next run row and to its first action in the range.
    private mutating func advanceRun(_ db: Database) throws {
        while try Self.step(runs, db) {
            let first = UInt64(bitPattern: sqlite3_column_int64(runs, 0)), last = UInt64(bitPattern: sqlite3_column_int64(runs, 1))
            guard last >= first else { throw LogDamage(detail: "the run of actions logged from #\(first) ends before it, at #\(last)") }
            guard last >= range.lowerBound else { continue }
            var cursor = RunCursor(
                first: first, last: last, epoch: UInt64(bitPattern: sqlite3_column_int64(runs, 2)),
                requestID: Self.text(runs, 3) ?? "", batchFirst: UInt64(bitPattern: sqlite3_column_int64(runs, 4)),
                batchSize: Int(sqlite3_column_int64(runs, 5)), bytes: Self.bytes(runs, 6), next: first)
            // Actions before the range are skipped in the row's bytes.
            var reader = ActionRun.Reader(bytes: cursor.bytes, first: first)
            while cursor.next < range.lowerBound {
                _ = try reader.next()
                cursor.next += 1
            }
            cursor.offset = reader.offset
            run = cursor
            return
        }
    }

    private static func step(_ statement: SQLiteStatement, _ db: Database) throws -> Bool {
        switch sqlite3_step(statement) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        case let code:
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db.sqliteConnection)))
        }
    }

    private static func bytes(_ statement: SQLiteStatement, _ column: Int32) -> UnsafeBufferPointer<UInt8> {
        // SQLite's order: the pointer first, then its size.
        let pointer = sqlite3_column_blob(statement, column)
        let count = Int(sqlite3_column_bytes(statement, column))
        return UnsafeBufferPointer(start: pointer?.assumingMemoryBound(to: UInt8.self), count: pointer == nil ? 0 : count)
    }

    private static func text(_ statement: SQLiteStatement, _ column: Int32) -> String? {
        guard sqlite3_column_type(statement, column) != SQLITE_NULL else { return nil }
        return String(decoding: bytes(statement, column), as: UTF8.self)
    }
}
