import Foundation
import FluxBusProtocol
import GRDB
import GRDBSQLite

/// What the coordinator reads back from its log while it runs: a request id's record, and completed entries for
/// FETCH.
extension ActionLog {
    /// What the log knows of a request id: what it asked for, and its answer once it completed. The index gives the
    /// row's sequence; a row found there under another id (none should be) is not this request's.
    func request(_ requestID: String) throws -> LoggedRequest? {
        // A fresh id, as nearly every DISPATCH's is, is answered from the index without SQL.
        guard let sequence = requestIDs.sequence(of: requestID) else { return nil }
        try applyJournal()
        let row = try database.inDatabase { db in
            try Row.fetchOne(db.cachedStatement(sql: "SELECT requestID, result, fingerprint, actionType FROM request WHERE sequence = ?"),
                             arguments: [sequence])
        }
        guard let row, row["requestID"] == requestID else { return nil }
        let answer = try (row["result"] as Data?).map { try codec.decode([Codec.signature, [UInt8]($0)]) }
        return LoggedRequest(
            answer: answer, fingerprint: (row["fingerprint"] as Int64?).map { UInt64(bitPattern: $0) }, actionType: row["actionType"])
    }

    /// Adds a committed write's request id to the index, with its request's first sequence: once per request row,
    /// not once per action of a batch, which would hash the same id 10,000 times for the largest batch.
    func indexRequestID(of write: LogWrite) {
        if let (requestID, first) = write.requestRow {
            requestIDs.insert(requestID, sequence: first)
        } else if case .answer(let requestID, let sequence, _) = write {
            requestIDs.insert(requestID, sequence: sequence, onlyIfAbsent: true)
        }
    }

    /// Rebuilds the request id index from the `request` table: at start, and once it has doubled since (compaction
    /// deletes rows from the table, never from the index).
    func rebuildRequestIDs() throws {
        try applyJournal()
        let logged = try database.inDatabase { db in
            try Row.fetchAll(db, sql: "SELECT requestID, sequence FROM request ORDER BY sequence").map {
                (requestID: $0["requestID"] as String, sequence: $0["sequence"] as UInt64)
            }
        }
        requestIDs.rebuild(from: logged)
    }

    /// Completed entries with sequences in `range`, at most `maximum` of them, oldest first.
    ///
    /// Stepped through SQLite's C API, each entry decoded straight from the row's bytes: this serves every FETCH of
    /// a replica catching up, and GRDB's rows boxed and copied each column of each entry on the way.
    func entries(in range: ClosedRange<UInt64>, maximum: Int) throws -> [ReplayEntry] {
        var entries: [ReplayEntry] = []
        entries.reserveCapacity(min(maximum, 4_096))
        try forEachEntryRow(in: range, maximum: maximum) { statement in
            var entry = try Self.column(0, of: statement) { try codec.decodeEntry($0) }
            entry.sequence = Self.sequence(of: statement)
            entry.payload = Self.column(1, of: statement) { Array($0) }
            try Self.checkChain(sequence: entry.sequence, actionType: entry.actionType, statement) {
                LogChain.next(after: $0, sequence: entry.sequence, actionType: entry.actionType, payload: entry.payload, error: entry.error)
            }
            entries.append(entry)
        }
        return entries
    }

    /// The same entries in wire layout: each row's bytes with its payload spliced in, every field checked, never
    /// decoded into values. This serves every FETCH of a replica catching up.
    func encodedEntries(in range: ClosedRange<UInt64>, maximum: Int) throws -> EncodedEntries {
        var splicer = EntrySplicer(limits: codec.limits)
        try forEachEntryRow(in: range, maximum: maximum) { statement in
            let spliced = try Self.column(0, of: statement) { row in
                try Self.column(1, of: statement) { payload in
                    try splicer.append(row: row, payload: payload, sequence: Self.sequence(of: statement))
                }
            }
            try Self.checkChain(sequence: spliced.sequence, actionType: spliced.actionType, statement) {
                splicer.chain(of: spliced, after: $0)
            }
        }
        return splicer.entries
    }

    /// Steps through the completed entries in `range`, oldest first, at most `maximum`, through SQLite's C API: GRDB's
    /// rows boxed and copied each column of each entry on the way. Columns: the entry (its run's first), the payload,
    /// its chain value, the chain value before it, its sequence.
    private func forEachEntryRow(in range: ClosedRange<UInt64>, maximum: Int, _ row: (SQLiteStatement) throws -> Void) throws {
        try applyJournal()
        try database.inDatabase { db in
            let statement = try statements.entries(in: db).sqliteStatement
            // Reset after every use, however it ends: a statement left mid-step would hold its read open.
            defer { sqlite3_reset(statement) }
            sqlite3_bind_int64(statement, 1, Int64(bitPattern: range.lowerBound))
            sqlite3_bind_int64(statement, 2, Int64(bitPattern: range.upperBound))
            sqlite3_bind_int64(statement, 3, Int64(maximum))
            while true {
                switch sqlite3_step(statement) {
                case SQLITE_DONE:
                    return
                case SQLITE_ROW:
                    try row(statement)
                case let code:
                    throw DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db.sqliteConnection)))
                }
            }
        }
    }

    /// An entry whose fields do not give the chain value logged with them was changed on disk after it was written
    /// (SQLite's own checks pass a flipped bit in a payload): served, it would replay as an action nobody sent. The
    /// check needs the predecessor's value, which compaction may have dropped; sequence 1 follows 0.
    /// - Parameter chain: the entry's chain value after a given previous one.
    private static func checkChain(
        sequence: UInt64, actionType: String, _ statement: SQLiteStatement, chain: (UInt64) -> UInt64
    ) throws {
        guard sqlite3_column_type(statement, 2) != SQLITE_NULL else { return }
        let previous: UInt64
        if sqlite3_column_type(statement, 3) != SQLITE_NULL {
            previous = UInt64(bitPattern: sqlite3_column_int64(statement, 3))
        } else if sequence == 1 {
            previous = 0
        } else {
            return
        }
        guard chain(previous) != UInt64(bitPattern: sqlite3_column_int64(statement, 2)) else { return }
        throw BusError(code: .storage, message: "the log's entry #\(sequence) (`\(actionType)`) does not match its "
            + "chain value: its row was changed or damaged on disk after it was written, so it is not served; restore the "
            + "log from a backup (docs/OPERATIONS.md, section 11)")
    }

    /// A store's recorded declaration, from its column's bytes (or a journal record's).
    /// - Throws: ``LogDamage`` when they do not decode.
    static func decodeDeclaration(_ bytes: [UInt8], store: String, codec: Codec) throws -> StoreDeclaration {
        do {
            return try bytes.withUnsafeBufferPointer { try codec.decodeRecord(StoreDeclaration.self, from: $0) }
        } catch {
            throw LogDamage(detail: "the recorded declaration of store `\(store)` does not decode (\(error))")
        }
    }

    /// The entry's sequence, column 4: its row's entry may be the first of a run of completions.
    private static func sequence(of statement: SQLiteStatement) -> UInt64 {
        UInt64(bitPattern: sqlite3_column_int64(statement, 4))
    }

    /// A blob column of the current row, read in place.
    private static func column<T>(
        _ index: Int32, of statement: SQLiteStatement, _ read: (UnsafeBufferPointer<UInt8>) throws -> T
    ) rethrows -> T {
        // SQLite's order: the pointer first, then its size.
        let bytes = sqlite3_column_blob(statement, index)
        let count = Int(sqlite3_column_bytes(statement, index))
        return try read(UnsafeBufferPointer(start: bytes?.assumingMemoryBound(to: UInt8.self), count: bytes == nil ? 0 : count))
    }
}
