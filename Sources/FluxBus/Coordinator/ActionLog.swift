import Foundation
import FluxBusProtocol
import GRDB
import GRDBSQLite

/// The coordinator's log: every action it accepted, what each dispatch recorded when it completed, the results
/// owed to request ids, and the stores' snapshots. SQLite through GRDB, in `<data directory>/log.sqlite`, or in
/// memory when there is no data directory.
///
/// Writes are buffered and committed together by ``flush()``, one commit for everything the coordinator did since
/// the last flush: that is the group commit. With a data directory, a commit on a dispatch's path is one record
/// appended to the journal beside the log (``LogJournal``, ActionLog+Journal.swift), and SQLite applies the journaled
/// writes later, many commits at a time. The engine commits before it publishes an action it logged, so no action
/// reaches a worker before its record is committed; with `--sync always` the engine may publish before the commit's
/// fsync (``flushDeferringSync()``, ``syncCommitted()``), and tells no one of the action until it is done.
///
/// It is only ever used on the coordinator's I/O thread.
final class ActionLog: BufferedLog {
    typealias Sync = LogSync

    /// The data directory, or nil when the log is in memory.
    let directory: String?
    let sync: Sync
    /// The connection, the codec of its records and the hot statements: ``ActionLog``'s own and its extensions'.
    let database: DatabaseQueue
    let codec = Codec(limits: .representable)
    let statements = LogStatements()
    private let lock: DirectoryLock?
    /// The bus id, the chain, and the mark beside the log.
    let identity: LogIdentity
    private let newBus: Bool
    /// The writes until the group commit, and what FETCH and the engine read without asking SQLite.
    let buffer = LogBuffer()
    var commitsSinceCheckpoint = 0
    var commitsSinceTruncation = 0
    /// The request ids the log may hold: a fresh id is answered without SQL.
    var requestIDs = RequestIDIndex()
    /// Where commits, checkpoints and snapshots are timed, when the coordinator serves metrics.
    var metrics: LogMetrics?
    /// With a data directory: syncs the WAL, after a commit straight to SQLite with `--sync always` (which the
    /// coordinator may defer past publishing), and before the journal starts again.
    let walSync: WALSync?
    /// With a data directory: where a dispatch's commits go first.
    let journal: LogJournal?
    /// The records the journal holds and SQLite does not yet, in order: each commit's writes (moved out of the buffer,
    /// not copied) with its time; how many bytes they came in.
    var journaled: [JournalRecord] = []
    var journaledRecords: Int { journaled.count }
    var journaledBytes = 0
    /// The last action's sequence committed, to the journal or to SQLite: the journal takes only actions after it, in
    /// order, as SQLite's table would (an action out of order is an engine bug, which SQLite's commit refuses whole).
    var lastCommittedAction: UInt64 = 0
    /// A commit waits for ``syncCommitted()`` to sync the journal, or the WAL; so does the mark that names it.
    private var journalSyncOwed = false
    private var walSyncOwed = false

    static let fileName = "log.sqlite"

    /// The log file's path, or nil in memory. Stored: every commit names it to the mark's error, and building it took
    /// about 2,000 instructions a dispatch.
    let path: String?

    deinit {
        // Finalized before the connection closes, which an unfinalized statement would keep open.
        statements.drop()
    }

    /// Opens the log, creating the directory and the file when they do not exist.
    /// - Throws: ``BusError`` (`storage`) naming the directory and saying what an operator can do, when it cannot be
    ///   created, is locked by another coordinator, is not a FluxBus log, or fails SQLite's integrity check.
    /// - Parameters:
    ///   - newBus: go on from what the log holds even when it holds less than its data directory had committed
    ///     (`--new-bus`).
    ///   - journalCapacity: the size of `log.journal` (tests make it small, to see it start again).
    init(directory: String?, sync: Sync, newBus: Bool = false, journalCapacity: Int = LogJournal.defaultCapacity) throws {
        self.directory = directory
        self.sync = sync
        self.newBus = newBus
        let path = directory.map { ($0 as NSString).appendingPathComponent(Self.fileName) }
        self.path = path
        walSync = path.map { WALSync(logPath: $0) }
        var configuration = Configuration()
        configuration.label = "fluxbus.log"
        configuration.journalMode = directory == nil ? .default : .wal
        do {
            if let directory, let path {
                lock = try DirectoryLock(directory: directory)
                identity = LogIdentity(mark: try LogMark(directory: directory), newBusID: LogMark.newBusID())
                journal = try LogJournal(directory: directory, capacity: journalCapacity)
                database = try DatabaseQueue(path: path, configuration: configuration)
            } else {
                lock = nil
                journal = nil
                identity = LogIdentity(mark: nil, newBusID: LogMark.newBusID())
                database = try DatabaseQueue(configuration: configuration)
            }
            try database.inDatabase { db in
                if directory != nil {
                    let verdict = try String.fetchOne(db, sql: "PRAGMA quick_check") ?? "no answer"
                    guard verdict == "ok" else { throw LogDamage(detail: "SQLite's integrity check says: \(verdict)") }
                }
                guard try !LogSchema.migrator.hasBeenSuperseded(db) else {
                    throw LogDamage(detail: "it was written by a newer FluxBus, whose log this one cannot read")
                }
            }
            try LogSchema.migrator.migrate(database)
            // After GRDB's own set-up, which puts a WAL database in NORMAL: set here, earlier it would be undone. In
            // batch mode the engine also runs a passive checkpoint every tick (`syncIfBatched`), which syncs the WAL.
            try database.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA synchronous = \(Self.synchronousLevel(sync))")
                // A checkpointed WAL is cut back to this size instead of staying as large as it ever grew.
                try db.execute(sql: "PRAGMA journal_size_limit = \(Self.walLimitBytes)")
            }
        } catch let error as BusError {
            throw error
        } catch {
            throw Self.unreadable(directory, error)
        }
    }

    /// The `synchronous` level the connection runs with, as SQLite reports it.
    func synchronousSetting() throws -> Int {
        try database.read { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") ?? -1 }
    }

    // MARK: - Opening

    /// Reads what a previous run left: the sequences, the actions logged and not completed, the stores and their
    /// snapshots. Call once, before anything is written.
    /// - Throws: ``BusError`` (`storage`) when a record cannot be read back.
    func recover() throws -> LogRecovery {
        var recovered: LogRecovery
        var holding: LogContinuity.Holding
        var chainTail: UInt64
        let replayed: Int
        do {
            replayed = try replayJournal()
            // Chunks of snapshots that were being received when the last run stopped: never recorded, never used.
            try database.write { db in try Self.dropUnrecordedSnapshotChunks(db) }
            (recovered, holding, chainTail) = try database.read { db in try self.read(db) }
        } catch {
            throw Self.unreadable(directory, error)
        }
        // Outside the read: a refusal says what to do about the log, not that it could not be read.
        let decision = try identity.open(
            holding: holding, chainTail: chainTail, logFile: path ?? "in memory", newBus: newBus,
            chainAt: { try self.loggedEntry(at: $0)?.chain },
            recordBus: { id in
                try self.database.write { db in
                    try db.execute(sql: "INSERT INTO bus (id, createdAt) VALUES (?, ?)", arguments: [id, Date().timeIntervalSince1970])
                }
            })
        recovered.busID = identity.busID
        recovered.opening = decision
        recovered.journalRecordsApplied = replayed
        lastCommittedAction = recovered.lastSequence
        try rebuildRequestIDs()
        // A predecessor that crashed while a commit synced left it in the page cache only: it is durable before the
        // coordinator dispatches it again or answers for it.
        if sync == .always { try walSync?.syncIfPresent() }
        return recovered
    }

    private func read(_ db: Database) throws -> (LogRecovery, LogContinuity.Holding, UInt64) {
        var recovered = LogRecovery()
        // Actions are in `action`, a row each, and in `action_run`, a row per run of a batch's actions (v12).
        recovered.lastSequence = max(
            try UInt64.fetchOne(db, sql: "SELECT MAX(sequence) FROM action") ?? 0,
            try UInt64.fetchOne(db, sql: "SELECT last FROM action_run ORDER BY first DESC LIMIT 1") ?? 0)
        recovered.lastCompleted = try UInt64.fetchOne(db, sql: "SELECT last FROM outcome ORDER BY sequence DESC LIMIT 1") ?? 0
        recovered.lastEpoch = try UInt64.fetchOne(db, sql: "SELECT MAX(epoch) FROM epoch") ?? 0
        let oldest = [
            try UInt64.fetchOne(db, sql: "SELECT MIN(sequence) FROM action"),
            try UInt64.fetchOne(db, sql: "SELECT MIN(first) FROM action_run"),
        ].compactMap { $0 }.min()
        var fingerprints: [UInt64: UInt64?] = [:]
        try forEachStoredAction(in: recovered.lastCompleted + 1...UInt64.max, db) { stored in
            let request = stored.batchFirst ?? stored.sequence
            if fingerprints[request] == nil {
                // Kept even when nil (a request from before fingerprints): asked once per request, not per action.
                fingerprints.updateValue(try Int64.fetchOne(
                    db, sql: "SELECT fingerprint FROM request WHERE sequence = ? AND requestID = ?", arguments: [request, stored.requestID]
                ).map { UInt64(bitPattern: $0) }, forKey: request)
            }
            recovered.addPending(
                sequence: stored.sequence, action: stored.batchAction, requestID: stored.requestID, batchFirst: stored.batchFirst,
                batchSize: stored.batchSize, fingerprint: fingerprints[request] ?? nil)
        }
        try readDecisionsAndPlans(db, into: &recovered)
        // In the order first seen: the stores of one commit share its time, and their rows follow each other.
        let storeRows = try Row.fetchAll(db, sql: "SELECT name, historyFrom, historyBefore, declaration FROM store ORDER BY firstSeen, rowid")
        recovered.stores = storeRows.map { $0["name"] }
        for row in storeRows { recovered.histories[row["name"]] = StoreHistory(from: row["historyFrom"], before: row["historyBefore"]) }
        recovered.declarations = try storeRows.compactMap { row in
            try (row["declaration"] as Data?).map { try Self.decodeDeclaration([UInt8]($0), store: row["name"], codec: codec) }
        }
        recovered.poisonMarks = try Row.fetchAll(db, sql: "SELECT sequence, store, reason FROM poison ORDER BY sequence, store")
            .map { PoisonMark(sequence: $0["sequence"], store: $0["store"], reason: $0["reason"]) }
        var snapshots: [String: LogSnapshot] = [:]
        for snapshot in try Self.readSnapshots(db) { snapshots[snapshot.store] = snapshot }
        // Completions are recorded in order, each row a run from its sequence through `last`, so everything up to
        // lastCompleted completed; a gap, or runs that overlap, would mean the file was edited or damaged.
        let completedCount = try UInt64.fetchOne(db, sql: "SELECT COALESCE(SUM(last - sequence + 1), 0) FROM outcome") ?? 0
        let misplaced = try Int.fetchOne(db, sql: """
            SELECT COUNT(*) FROM (SELECT sequence, last, LAG(last) OVER (ORDER BY sequence) AS previous FROM outcome)
            WHERE last < sequence OR sequence <> previous + 1
            """) ?? 0
        if misplaced > 0 || (oldest.map { recovered.lastCompleted >= $0 && completedCount != recovered.lastCompleted - $0 + 1 } ?? false) {
            throw LogDamage(detail: "completed dispatches \(oldest ?? 0)…\(recovered.lastCompleted) have gaps or overlaps")
        }
        let oldestRetained = oldest ?? recovered.lastSequence + 1
        buffer.recovered(recovered, oldestRetained: oldestRetained, snapshots: snapshots)
        let busID = try String.fetchOne(db, sql: "SELECT id FROM bus LIMIT 1")
        var tail: UInt64?
        try forEachStoredAction(in: recovered.lastSequence...recovered.lastSequence, db) { tail = $0.chain }
        // A log with actions and no bus row was written by a FluxBus without identities: its first start adopts it.
        let holding = LogContinuity.Holding(
            busID: busID ?? (recovered.lastSequence > 0 ? "" : nil), lastSequence: recovered.lastSequence, oldestRetained: oldestRetained)
        return (recovered, holding, tail ?? 0)
    }

    // MARK: - Writing (the rest is ``BufferedLog``'s)

    /// Commits every buffered write, and syncs it with `--sync always`.
    /// - Throws: ``BusError`` (`storage`) when the log cannot be written: the coordinator must stop rather than
    ///   publish what it could not log.
    func flush() throws {
        _ = try flushDeferringSync()
        // Durable before the caller goes on: a decision's RELEASE waits for this. SQLite's turn to apply the journal
        // waits for the next commit that publishes, or the next tick, rather than sit on that RELEASE's path.
        try syncCommitted(applyingJournal: false)
    }

    /// Commits every buffered write: appended to the journal as one record, or, when the journal does not take them,
    /// in one SQLite transaction after the journaled writes. With `--sync always` on disk the sync is owed.
    /// - Returns: whether ``syncCommitted()`` has work to do once the commit's ACTIONs are on their way: a sync, or
    ///   SQLite's turn to apply the journaled writes.
    func flushDeferringSync() throws -> Bool {
        guard !buffer.writes.isEmpty else { return false }
        if let record = journalRecord() {
            do {
                try journalBuffer(record)
            } catch {
                throw writeFailure(error)
            }
            if requestIDs.isRebuildDue { try? rebuildRequestIDs() }
            if sync == .always {
                journalSyncOwed = true
                return true
            }
            try identity.committed(beside: path)
            return isApplyDue
        }
        do {
            // The journaled writes first, on their own: a commit that fails leaves nothing of itself, and them applied.
            try applyJournal()
            try commitBuffer { pending in
                try applyToSQLite(pending)
                for write in pending { indexRequestID(of: write) }
                noteActions(in: pending)
            }
        } catch {
            throw writeFailure(error)
        }
        // A rebuild that fails leaves the index as it was, still a superset of the table: lookups stay correct.
        if requestIDs.isRebuildDue { try? rebuildRequestIDs() }
        if sync == .always, walSync != nil {
            walSyncOwed = true
            return true
        }
        try identity.committed(beside: path)
        return false
    }

    /// Syncs the journal or the WAL after a commit, then moves the mark: it never names more than the disk holds. Then
    /// SQLite applies the journaled writes, when enough wait.
    func syncCommitted() throws { try syncCommitted(applyingJournal: true) }

    private func syncCommitted(applyingJournal: Bool) throws {
        if journalSyncOwed || walSyncOwed {
            if journalSyncOwed, let journal { try timingSync { try journal.sync() } }
            if walSyncOwed, let walSync { try timingSync { try walSync.sync() } }
            journalSyncOwed = false
            walSyncOwed = false
            try identity.committed(beside: path)
        }
        if applyingJournal, isApplyDue { try applyJournal() }
    }

    private func timingSync(_ sync: () throws -> Void) throws {
        if let metrics { try metrics.timingSync(sync) } else { try sync() }
    }

    // MARK: - Errors

    private static func unreadable(_ directory: String?, _ error: any Error) -> BusError {
        let place = directory.map { "the log in \(($0 as NSString).appendingPathComponent(fileName))" } ?? "the in-memory log"
        return BusError(code: .storage, message: "cannot read \(place): \(error). The coordinator refuses to start rather "
            + "than start an empty bus. Restore the file from a backup, or move the data directory aside to start a new "
            + "bus whose workers start empty; see docs/OPERATIONS.md, Recovery")
    }
}
