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
        try forEachEntry(in: range, maximum: maximum) { row, action, previous in
            var entry = try codec.decodeEntry(row)
            entry.sequence = action.sequence
            entry.payload = Array(action.payload)
            try Self.checkChain(action, previous: previous) {
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
        try forEachEntry(in: range, maximum: maximum) { row, action, previous in
            let spliced = try splicer.append(row: row, payload: action.payload, sequence: action.sequence)
            try Self.checkChain(action, previous: previous) { splicer.chain(of: spliced, after: $0) }
        }
        return splicer.entries
    }

    /// Calls `body` with each completed entry in `range`, oldest first, at most `maximum`: the entry of the outcome row
    /// that covers it (its run's first, with an empty payload), the action's row, and the chain value of the action
    /// before it when the log holds that one (0 before #1). Outcome rows and actions are both read in key order, and
    /// nothing is sorted or copied.
    private func forEachEntry(
        in range: ClosedRange<UInt64>, maximum: Int,
        _ body: (UnsafeBufferPointer<UInt8>, StoredActions.Action, _ previous: UInt64?) throws -> Void
    ) throws {
        guard maximum > 0 else { return }
        try applyJournal()
        try database.inDatabase { db in
            let outcomes = try statements.entries(in: db).sqliteStatement
            // Reset after every use, however it ends: a statement left mid-step would hold its read open.
            defer { sqlite3_reset(outcomes) }
            sqlite3_bind_int64(outcomes, 1, Int64(clamping: range.lowerBound))
            sqlite3_bind_int64(outcomes, 2, Int64(clamping: range.upperBound))
            var covering: ClosedRange<UInt64>?
            func nextOutcome() throws {
                switch sqlite3_step(outcomes) {
                case SQLITE_ROW:
                    let (first, last) = (UInt64(bitPattern: sqlite3_column_int64(outcomes, 0)), UInt64(bitPattern: sqlite3_column_int64(outcomes, 1)))
                    guard last >= first else { throw LogDamage(detail: "the outcomes recorded from #\(first) end before it, at #\(last)") }
                    covering = first...last
                case SQLITE_DONE:
                    covering = nil
                case let code:
                    throw DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db.sqliteConnection)))
                }
            }
            try nextOutcome()
            var served = 0
            var previous: (sequence: UInt64, chain: UInt64?)?
            // From the action before the range, for its chain value; it ends at `maximum`, or where no outcome row is
            // left: completions are recorded in order, so nothing after the last one's row has completed.
            var actions = try StoredActions(db, statements: statements, in: max(range.lowerBound, 1) - 1...range.upperBound)
            defer { actions.finish() }
            while served < maximum, covering != nil, let action = try actions.next(db) {
                defer { previous = (action.sequence, action.chain) }
                guard action.sequence >= range.lowerBound else { continue }
                while let run = covering, run.upperBound < action.sequence { try nextOutcome() }
                guard let run = covering, run.contains(action.sequence) else { continue }
                let before = action.sequence == 1 ? 0 : previous.flatMap { $0.sequence + 1 == action.sequence ? $0.chain : nil }
                try Self.column(2, of: outcomes) { row in try body(row, action, before) }
                served += 1
            }
        }
    }

    /// An entry whose fields do not give the chain value logged with its action was changed on disk after it was
    /// written (SQLite's own checks pass a flipped bit in a payload): served, it would replay as an action nobody sent.
    /// The check needs the predecessor's value, which compaction may have dropped; sequence 1 follows 0.
    /// - Parameter chain: the entry's chain value after a given previous one.
    private static func checkChain(_ action: StoredActions.Action, previous: UInt64?, chain: (UInt64) -> UInt64) throws {
        guard let logged = action.chain, let previous, chain(previous) != logged else { return }
        throw BusError(code: .storage, message: "the log's entry #\(action.sequence) (`\(action.type)`) does not match its "
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

    /// A blob column of the current row, read in place.
    private static func column<T>(
        _ index: Int32, of statement: SQLiteStatement, _ read: (UnsafeBufferPointer<UInt8>) throws -> T
    ) rethrows -> T {
        // SQLite's order: the pointer first, then its size.
        let bytes = sqlite3_column_blob(statement, index)
        let count = Int(sqlite3_column_bytes(statement, index))
        return try read(UnsafeBufferPointer(start: bytes?.assumingMemoryBound(to: UInt8.self), count: bytes == nil ? 0 : count))
    }

    /// One read of the action's row; nil too for a row without a chain (a log from before chains keeps none).
    func loggedEntry(at sequence: UInt64) throws -> LoggedEntry? {
        try applyJournal()
        return try database.inDatabase { db in
            var entry: LoggedEntry?
            try forEachStoredAction(in: sequence...sequence, db) { stored in
                entry = stored.chain.map { LoggedEntry(chain: $0, epoch: stored.epoch) }
            }
            return entry
        }
    }

    /// Calls `body` with each action the log holds in `range`, oldest first, from both of its tables (``StoredActions``);
    /// each is valid only during its call.
    func forEachStoredAction(in range: ClosedRange<UInt64>, _ db: Database, _ body: (StoredActions.Action) throws -> Void) throws {
        var actions = try StoredActions(db, statements: statements, in: range)
        defer { actions.finish() }
        while let action = try actions.next(db) { try body(action) }
    }
}
