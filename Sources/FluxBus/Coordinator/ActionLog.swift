import Foundation
import FluxBusProtocol
import GRDB
import GRDBSQLite

/// The coordinator's log: every action it accepted, what each dispatch recorded when it completed, the results
/// owed to request ids, and the stores' snapshots. SQLite through GRDB, in `<data directory>/log.sqlite`, or in
/// memory when there is no data directory.
///
/// Writes are buffered and committed together by ``flush()``, one transaction for everything the coordinator did
/// since the last flush: that is the group commit. The engine flushes before it publishes an action it logged, so
/// no action reaches a worker before its record is committed (and, with `--sync always`, on disk).
///
/// It is only ever used on the coordinator's I/O thread.
final class ActionLog: LogStorage {
    typealias Sync = LogSync

    private enum Write {
        case epoch(UInt64)
        case action(sequence: UInt64, epoch: UInt64, action: BatchAction, origin: String, requestID: String, batch: (first: UInt64, size: Int)?)
        case completion(sequence: UInt64, entry: [UInt8])
        case decision(sequence: UInt64, output: StoreOutput)
        case plans(request: UInt64, plans: [String: [PlanStep]])
        case answer(requestID: String, sequence: UInt64, message: [UInt8])
        case store(String)
        case snapshot(LogSnapshot)
        case compaction(through: UInt64, keepRequests: Int)
    }

    /// The data directory, or nil when the log is in memory.
    let directory: String?
    let sync: Sync
    private let database: DatabaseQueue
    private let codec = Codec(limits: .representable)
    private let lock: DirectoryLock?
    private var writes: [Write] = []
    /// Whether an action waits in ``writes``: it must be committed before it is published.
    private(set) var hasUnflushedActions = false
    private var commitsSinceCheckpoint = 0
    /// The first sequence still in the log, kept here so that FETCH does not ask SQLite.
    private(set) var oldestRetained: UInt64 = 1
    private(set) var knownStores: [String] = []
    private var knownStoreSet: Set<String> = []
    private(set) var snapshots: [String: LogSnapshot] = [:]

    static let fileName = "log.sqlite"

    /// The log file's path, or nil in memory.
    var path: String? { directory.map { ($0 as NSString).appendingPathComponent(Self.fileName) } }

    /// Opens the log, creating the directory and the file when they do not exist.
    /// - Throws: ``BusError`` (`storage`) naming the directory and saying what an operator can do, when it cannot be
    ///   created, is locked by another coordinator, is not a FluxBus log, or fails SQLite's integrity check.
    init(directory: String?, sync: Sync) throws {
        self.directory = directory
        self.sync = sync
        var configuration = Configuration()
        configuration.label = "fluxbus.log"
        configuration.journalMode = directory == nil ? .default : .wal
        do {
            if let directory {
                lock = try DirectoryLock(directory: directory)
                database = try DatabaseQueue(path: (directory as NSString).appendingPathComponent(Self.fileName), configuration: configuration)
            } else {
                lock = nil
                database = try DatabaseQueue(configuration: configuration)
            }
            try database.inDatabase { db in
                if directory != nil {
                    let verdict = try String.fetchOne(db, sql: "PRAGMA quick_check") ?? "no answer"
                    guard verdict == "ok" else { throw LogDamage(detail: "SQLite's integrity check says: \(verdict)") }
                }
                guard try !Self.migrator.hasBeenSuperseded(db) else {
                    throw LogDamage(detail: "it was written by a newer FluxBus, whose log this one cannot read")
                }
            }
            try Self.migrator.migrate(database)
            // After GRDB's own set-up, which puts a WAL database in NORMAL: set here, earlier it would be undone. In
            // batch mode the engine also runs a passive checkpoint every tick (`syncIfBatched`), which syncs the WAL.
            try database.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA synchronous = \(Self.synchronousLevel(sync))")
            }
        } catch let error as BusError {
            throw error
        } catch {
            throw Self.unreadable(directory, error)
        }
    }

    /// SQLite's `synchronous` level for a sync mode: FULL (2), NORMAL (1) or OFF (0).
    static func synchronousLevel(_ sync: Sync) -> Int {
        switch sync {
        case .always: 2
        case .batch: 1
        case .off: 0
        }
    }

    /// The `synchronous` level the connection runs with, as SQLite reports it.
    func synchronousSetting() throws -> Int {
        try database.read { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") ?? -1 }
    }

    // MARK: - Schema

    private static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(sql: """
                CREATE TABLE epoch (
                    epoch INTEGER PRIMARY KEY,
                    startedAt REAL NOT NULL
                );
                -- One row per accepted action, from the moment it is logged; entry is filled in when the dispatch
                -- completes: the ReplayEntry in wire layout, with every planned store's recorded outcome and output.
                CREATE TABLE action (
                    sequence INTEGER PRIMARY KEY,
                    epoch INTEGER NOT NULL,
                    actionType TEXT NOT NULL,
                    payload BLOB NOT NULL,
                    error TEXT,
                    origin TEXT NOT NULL,
                    requestID TEXT,
                    batchFirst INTEGER,
                    batchSize INTEGER NOT NULL DEFAULT 0,
                    loggedAt REAL NOT NULL,
                    completedAt REAL,
                    entry BLOB
                );
                -- The answer owed to each request id: its first sequence from the start, its RESULT or BATCH_RESULT (the
                -- whole body frame) once complete.
                CREATE TABLE request (
                    requestID TEXT PRIMARY KEY,
                    sequence INTEGER NOT NULL,
                    result BLOB
                ) WITHOUT ROWID;
                CREATE INDEX request_by_sequence ON request(sequence);
                CREATE TABLE store (
                    name TEXT PRIMARY KEY,
                    firstSeen REAL NOT NULL
                );
                CREATE TABLE snapshot (
                    store TEXT PRIMARY KEY,
                    sequence INTEGER NOT NULL,
                    digest INTEGER NOT NULL,
                    state BLOB NOT NULL,
                    worker TEXT NOT NULL,
                    takenAt REAL NOT NULL
                );
                """)
        }
        migrator.registerMigration("v2-decisions") { db in
            try db.execute(sql: """
                -- The outcome of a store that other stores wait for, recorded before it is released to them, for the
                -- dispatches in flight: a restart dispatching one again releases the same outcome.
                CREATE TABLE decision (
                    sequence INTEGER NOT NULL,
                    store TEXT NOT NULL,
                    status INTEGER NOT NULL,
                    message TEXT NOT NULL,
                    output BLOB,
                    PRIMARY KEY (sequence, store)
                ) WITHOUT ROWID;
                """)
        }
        migrator.registerMigration("v3-plans") { db in
            try db.execute(sql: """
                -- Each request's plans, fixed before its first ACTION is published (PlanText), by its first sequence:
                -- a restart dispatching it again names the same stores.
                CREATE TABLE plan (
                    request INTEGER NOT NULL,
                    actionType TEXT NOT NULL,
                    steps TEXT NOT NULL,
                    PRIMARY KEY (request, actionType)
                ) WITHOUT ROWID;
                """)
        }
        return migrator
    }

    // MARK: - Opening

    /// Reads what a previous run left: the sequences, the actions logged and not completed, the stores and their
    /// snapshots. Call once, before anything is written.
    /// - Throws: ``BusError`` (`storage`) when a record cannot be read back.
    func recover() throws -> LogRecovery {
        do {
            return try database.read { db in
                var recovered = LogRecovery()
                recovered.lastSequence = try UInt64.fetchOne(db, sql: "SELECT MAX(sequence) FROM action") ?? 0
                recovered.lastCompleted = try UInt64.fetchOne(db, sql: "SELECT MAX(sequence) FROM action WHERE entry IS NOT NULL") ?? 0
                recovered.lastEpoch = try UInt64.fetchOne(db, sql: "SELECT MAX(epoch) FROM epoch") ?? 0
                let oldest = try UInt64.fetchOne(db, sql: "SELECT MIN(sequence) FROM action")
                let rows = try Row.fetchAll(db, sql: """
                    SELECT sequence, actionType, payload, error, requestID, batchFirst, batchSize FROM action
                    WHERE sequence > ? ORDER BY sequence
                    """, arguments: [recovered.lastCompleted])
                for row in rows {
                    recovered.addPending(
                        sequence: row["sequence"],
                        action: BatchAction(actionType: row["actionType"], payload: [UInt8](row["payload"] as Data), error: row["error"]),
                        requestID: row["requestID"] ?? "", batchFirst: row["batchFirst"], batchSize: row["batchSize"])
                }
                for row in try Row.fetchAll(db, sql: """
                    SELECT sequence, store, status, message, output FROM decision WHERE sequence > ? ORDER BY sequence
                    """, arguments: [recovered.lastCompleted]) {
                    guard let status = OutcomeStatus(rawValue: row["status"]) else {
                        throw LogDamage(detail: "a recorded decision for #\(row["sequence"] as UInt64) has an unknown status")
                    }
                    let output = StoreOutput(
                        store: row["store"], status: status, message: row["message"],
                        output: (row["output"] as Data?).map { [UInt8]($0) })
                    recovered.decisions[row["sequence"], default: []].append(output)
                }
                let firsts = Set(recovered.pending.map { $0.batchFirst ?? $0.sequence })
                if let lowest = firsts.min() {
                    for row in try Row.fetchAll(db, sql: "SELECT request, actionType, steps FROM plan WHERE request >= ?", arguments: [lowest]) {
                        let request: UInt64 = row["request"]
                        guard firsts.contains(request) else { continue }
                        guard let steps = PlanText.decode(row["steps"]) else {
                            throw LogDamage(detail: "the recorded plan of the request at #\(request) cannot be read")
                        }
                        recovered.plans[request, default: [:]][row["actionType"]] = steps
                    }
                }
                recovered.stores = try String.fetchAll(db, sql: "SELECT name FROM store ORDER BY firstSeen, name")
                for row in try Row.fetchAll(db, sql: "SELECT store, sequence, digest, state, worker FROM snapshot") {
                    let snapshot = LogSnapshot(
                        store: row["store"], sequence: row["sequence"], digest: UInt64(bitPattern: row["digest"]),
                        state: [UInt8](row["state"] as Data), worker: row["worker"])
                    snapshots[snapshot.store] = snapshot
                }
                // Completions are recorded in order, so everything up to lastCompleted completed; a gap would mean
                // the file was edited or damaged.
                let completedCount = try UInt64.fetchOne(db, sql: "SELECT COUNT(*) FROM action WHERE entry IS NOT NULL") ?? 0
                if let oldest, recovered.lastCompleted >= oldest, completedCount != recovered.lastCompleted - oldest + 1 {
                    throw LogDamage(detail: "completed dispatches \(oldest)…\(recovered.lastCompleted) have gaps")
                }
                oldestRetained = oldest ?? recovered.lastSequence + 1
                knownStores = recovered.stores
                knownStoreSet = Set(recovered.stores)
                return recovered
            }
        } catch {
            throw Self.unreadable(directory, error)
        }
    }

    // MARK: - Writing

    func beginEpoch(_ epoch: UInt64) { writes.append(.epoch(epoch)) }

    /// Logs an accepted action, with its request id and, for a batch, the batch's first sequence and size. It must
    /// be flushed before the action is published.
    func append(
        sequence: UInt64, epoch: UInt64, action: BatchAction, origin: String, requestID: String, batch: (first: UInt64, size: Int)?
    ) {
        writes.append(.action(sequence: sequence, epoch: epoch, action: action, origin: origin, requestID: requestID, batch: batch))
        hasUnflushedActions = true
    }

    /// Records a completed dispatch's entry, for replay.
    func complete(_ entry: ReplayEntry) {
        writes.append(.completion(sequence: entry.sequence, entry: codec.encodeEntry(entry)))
    }

    /// Records a request's plans, before its first ACTION is published.
    func recordPlans(_ plans: [String: [PlanStep]], request first: UInt64) {
        writes.append(.plans(request: first, plans: plans))
    }

    /// Records a store's outcome that stores wait for, before it is released to them.
    func recordDecision(_ output: StoreOutput, sequence: UInt64) {
        writes.append(.decision(sequence: sequence, output: output))
    }

    /// Records the answer (RESULT or BATCH_RESULT) owed to a request id, for retries.
    func recordAnswer(_ message: Message, for requestID: String, sequence: UInt64) {
        writes.append(.answer(requestID: requestID, sequence: sequence, message: codec.encode(message)[1]))
    }

    /// Remembers a store name, so that compaction waits for its snapshot.
    func rememberStore(_ name: String) {
        guard knownStoreSet.insert(name).inserted else { return }
        knownStores.append(name)
        writes.append(.store(name))
    }

    func saveSnapshot(_ snapshot: LogSnapshot) {
        snapshots[snapshot.store] = snapshot
        writes.append(.snapshot(snapshot))
    }

    /// Drops the entries up to and including `sequence`, and all but the newest `keepRequests` request ids.
    func compact(through sequence: UInt64, keepRequests: Int) {
        guard sequence >= oldestRetained else { return }
        oldestRetained = sequence + 1
        writes.append(.compaction(through: sequence, keepRequests: keepRequests))
    }

    /// Commits every buffered write in one transaction.
    /// - Throws: ``BusError`` (`storage`) when SQLite cannot write: the coordinator must stop rather than publish
    ///   what it could not log.
    func flush() throws {
        guard !writes.isEmpty else { return }
        let pending = writes
        do {
            try database.write { db in
                for write in pending { try Self.perform(write, in: db) }
            }
        } catch {
            throw BusError(code: .storage, message: "cannot write the log\(path.map { " \($0)" } ?? ""): \(error). "
                + "The coordinator stops rather than publish what it could not log; check the disk (space, permissions, "
                + "errors in the system log), then start it again: it resumes from what was committed")
        }
        writes.removeAll(keepingCapacity: true)
        hasUnflushedActions = false
        commitsSinceCheckpoint += 1
    }

    /// In batch mode, syncs what was committed since the last call (a passive WAL checkpoint syncs the WAL first).
    func syncIfBatched() {
        guard sync == .batch, directory != nil, commitsSinceCheckpoint > 0 else { return }
        commitsSinceCheckpoint = 0
        _ = try? database.writeWithoutTransaction { db in try db.checkpoint(.passive) }
    }

    private static func perform(_ write: Write, in db: Database) throws {
        let now = Date().timeIntervalSince1970
        switch write {
        case .epoch(let epoch):
            try db.cachedStatement(sql: "INSERT INTO epoch (epoch, startedAt) VALUES (?, ?)").execute(arguments: [epoch, now])
        case .action(let sequence, let epoch, let action, let origin, let requestID, let batch):
            // The hot path: one row per action, bound straight through SQLite's C API.
            let statement = try db.cachedStatement(sql: """
                INSERT INTO action (sequence, epoch, actionType, payload, error, origin, requestID, batchFirst, batchSize, loggedAt)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """)
            var row = RowBinder(statement)
            row.integer(sequence)
            row.integer(epoch)
            row.text(action.actionType)
            row.blob(action.payload)
            row.text(action.error)
            row.text(origin)
            row.text(requestID.isEmpty ? nil : requestID)
            if let batch { row.integer(batch.first) } else { row.null() }
            row.integer(UInt64(batch?.size ?? 0))
            row.real(now)
            try row.run(in: db)
            if !requestID.isEmpty, batch.map({ $0.first == sequence }) ?? true {
                try db.cachedStatement(sql: "INSERT OR REPLACE INTO request (requestID, sequence) VALUES (?, ?)")
                    .execute(arguments: [requestID, sequence])
            }
        case .completion(let sequence, let entry):
            var row = RowBinder(try db.cachedStatement(sql: "UPDATE action SET entry = ?, completedAt = ? WHERE sequence = ?"))
            row.blob(entry)
            row.real(now)
            row.integer(sequence)
            try row.run(in: db)
        case .plans(let request, let plans):
            for (actionType, steps) in plans {
                try db.cachedStatement(sql: "INSERT OR REPLACE INTO plan (request, actionType, steps) VALUES (?, ?, ?)")
                    .execute(arguments: [request, actionType, PlanText.encode(steps)])
            }
        case .decision(let sequence, let output):
            try db.cachedStatement(sql: """
                INSERT OR IGNORE INTO decision (sequence, store, status, message, output) VALUES (?, ?, ?, ?, ?)
                """).execute(arguments: [sequence, output.store, output.status.rawValue, output.message, output.output.map { Data($0) }])
        case .answer(let requestID, let sequence, let message):
            try db.cachedStatement(sql: "INSERT OR REPLACE INTO request (requestID, sequence, result) VALUES (?, ?, ?)")
                .execute(arguments: [requestID, sequence, Data(message)])
        case .store(let name):
            try db.cachedStatement(sql: "INSERT OR IGNORE INTO store (name, firstSeen) VALUES (?, ?)").execute(arguments: [name, now])
        case .snapshot(let snapshot):
            try db.cachedStatement(sql: """
                INSERT OR REPLACE INTO snapshot (store, sequence, digest, state, worker, takenAt) VALUES (?, ?, ?, ?, ?, ?)
                """).execute(arguments: [
                    snapshot.store, snapshot.sequence, Int64(bitPattern: snapshot.digest), Data(snapshot.state),
                    snapshot.worker, now,
                ])
        case .compaction(let through, let keepRequests):
            try db.execute(sql: "DELETE FROM action WHERE sequence <= ?", arguments: [through])
            try db.execute(sql: "DELETE FROM decision WHERE sequence <= ?", arguments: [through])
            // Plans of requests that completed: every request that still has an action to run starts later.
            try db.execute(sql: """
                DELETE FROM plan WHERE request < COALESCE(
                    (SELECT MIN(COALESCE(batchFirst, sequence)) FROM action WHERE entry IS NULL), ?)
                """, arguments: [through + 1])
            try db.execute(sql: """
                DELETE FROM request WHERE sequence < (SELECT sequence FROM request ORDER BY sequence DESC LIMIT 1 OFFSET ?)
                """, arguments: [max(0, keepRequests - 1)])
        }
    }

    // MARK: - Reading

    /// The answer recorded for a request id, if its request completed.
    func result(for requestID: String) throws -> Message? {
        let bytes = try database.inDatabase { db in
            try Data.fetchOne(db, cachedSQL: "SELECT result FROM request WHERE requestID = ?", arguments: [requestID])
        }
        return try bytes.map { try codec.decode([Codec.signature, [UInt8]($0)]) }
    }

    /// Completed entries with sequences in `range`, at most `maximum` of them, oldest first.
    func entries(in range: ClosedRange<UInt64>, maximum: Int) throws -> [ReplayEntry] {
        let blobs = try database.inDatabase { db in
            try Data.fetchAll(db, cachedSQL: """
                SELECT entry FROM action WHERE sequence BETWEEN ? AND ? AND entry IS NOT NULL ORDER BY sequence LIMIT ?
                """, arguments: [range.lowerBound, range.upperBound, maximum])
        }
        return try blobs.map { try codec.decodeEntry([UInt8]($0)) }
    }

    // MARK: - Errors

    private struct LogDamage: Error, CustomStringConvertible {
        let detail: String
        var description: String { detail }
    }

    private static func unreadable(_ directory: String?, _ error: any Error) -> BusError {
        let place = directory.map { "the log in \(($0 as NSString).appendingPathComponent(fileName))" } ?? "the in-memory log"
        return BusError(code: .storage, message: "cannot read \(place): \(error). The coordinator refuses to start rather "
            + "than start an empty bus. Restore the file from a backup, or move the data directory aside to start a new "
            + "bus whose workers start empty; see docs/OPERATIONS.md, Recovery")
    }
}

/// Binds one row's values in order and runs the statement: no `StatementArguments`, whose boxing of every value cost
/// more than SQLite's own work on the log's hot path.
private struct RowBinder {
    private let statement: SQLiteStatement
    private var index: Int32 = 0

    init(_ statement: Statement) {
        self.statement = statement.sqliteStatement
        sqlite3_reset(self.statement)
    }

    mutating func integer(_ value: UInt64) {
        index += 1
        sqlite3_bind_int64(statement, index, Int64(bitPattern: value))
    }

    mutating func real(_ value: Double) {
        index += 1
        sqlite3_bind_double(statement, index, value)
    }

    mutating func null() {
        index += 1
        sqlite3_bind_null(statement, index)
    }

    mutating func text(_ value: String?) {
        index += 1
        guard let value else { return _ = sqlite3_bind_null(statement, index) }
        var copy = value
        copy.withUTF8 { bytes in
            _ = sqlite3_bind_text(statement, index, bytes.baseAddress.map { UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self) },
                                  Int32(bytes.count), Self.transient)
        }
    }

    mutating func blob(_ value: [UInt8]) {
        index += 1
        value.withUnsafeBytes { bytes in
            // A zero-length blob is still a blob, not NULL.
            _ = sqlite3_bind_blob(statement, index, bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(bytes.count), Self.transient)
        }
    }

    /// Steps the statement once; it must finish (an INSERT or UPDATE).
    func run(in db: Database) throws {
        let code = sqlite3_step(statement)
        sqlite3_reset(statement)
        guard code == SQLITE_DONE else {
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db.sqliteConnection)))
        }
    }

    /// SQLITE_TRANSIENT: SQLite copies the bytes before the bind returns.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
}

extension Data {
    fileprivate static func fetchOne(_ db: Database, cachedSQL sql: String, arguments: StatementArguments) throws -> Data? {
        try Data.fetchOne(db.cachedStatement(sql: sql), arguments: arguments)
    }

    fileprivate static func fetchAll(_ db: Database, cachedSQL sql: String, arguments: StatementArguments) throws -> [Data] {
        try Data.fetchAll(db.cachedStatement(sql: sql), arguments: arguments)
    }
}

/// An exclusive lock on a data directory, so that two coordinators never write one log. `flock` is released by the
/// kernel when the process dies, even by SIGKILL.
private final class DirectoryLock {
    private let descriptor: Int32

    init(directory: String) throws {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw BusError(code: .storage, message: "cannot create the data directory \(directory): \(error.localizedDescription). "
                + "Check its parent and permissions, or pass another --data-dir")
        }
        let path = (directory as NSString).appendingPathComponent("lock")
        descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw BusError(code: .storage, message: "cannot open \(path): \(String(cString: strerror(errno))). "
                + "Check the data directory's permissions, or pass another --data-dir")
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let holder = (try? String(contentsOfFile: path, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
            close(descriptor)
            throw BusError(code: .storage, message: "the data directory \(directory) is in use by another coordinator"
                + (holder.isEmpty ? "" : " (pid \(holder))") + "; stop it, or give this one another --data-dir")
        }
        ftruncate(descriptor, 0)
        let pid = "\(getpid())\n"
        _ = pid.withCString { write(descriptor, $0, strlen($0)) }
    }

    deinit { close(descriptor) }
}
