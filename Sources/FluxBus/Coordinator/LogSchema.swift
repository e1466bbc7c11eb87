import Foundation
import FluxBusProtocol
import GRDB

/// The log's tables, as GRDB migrations: v1 the first release, v2 the bus's identity, the chain, request
/// fingerprints, and outcomes in a table of their own; v3 decisions and plans; v4 snapshots' bytes in chunks; v5
/// poison marks; v6 stores' histories; v7 snapshots' log chains; v8 requests keyed by sequence; v9 the journal's place;
/// v10 stores' declarations; v11 outcome rows that hold runs of completions; v12 a batch's actions in rows of runs.
enum LogSchema {
    static var migrator: DatabaseMigrator {
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
        // v2: the bus's id (one row), each action's chain value (docs/PROTOCOL.md, appendix B), and each request's
        // fingerprint and first action type, so that a request id used again for other actions is refused. The
        // chain of a v1 log is computed here from its oldest retained action.
        migrator.registerMigration("v2") { db in
            try db.execute(sql: """
                CREATE TABLE bus (
                    id TEXT NOT NULL,
                    createdAt REAL NOT NULL
                );
                ALTER TABLE action ADD COLUMN chain INTEGER;
                ALTER TABLE request ADD COLUMN fingerprint INTEGER;
                ALTER TABLE request ADD COLUMN actionType TEXT;
                -- What a completed dispatch recorded, apart from its action's row: completing it then writes this
                -- small row instead of rewriting the action with its payload. Entries keep no payload of their own.
                CREATE TABLE outcome (
                    sequence INTEGER PRIMARY KEY,
                    entry BLOB NOT NULL,
                    completedAt REAL NOT NULL
                );
                INSERT INTO outcome (sequence, entry, completedAt)
                    SELECT sequence, entry, completedAt FROM action WHERE entry IS NOT NULL;
                UPDATE action SET entry = NULL WHERE entry IS NOT NULL;
                """)
            var chain: UInt64 = 0
            let rows = try Row.fetchCursor(db, sql: "SELECT sequence, actionType, payload, error FROM action ORDER BY sequence")
            var chains: [(UInt64, UInt64)] = []
            while let row = try rows.next() {
                let sequence: UInt64 = row["sequence"]
                chain = LogChain.next(
                    after: chain, sequence: sequence, actionType: row["actionType"], payload: [UInt8](row["payload"] as Data),
                    error: row["error"])
                chains.append((sequence, chain))
            }
            for (sequence, chain) in chains {
                try db.execute(sql: "UPDATE action SET chain = ? WHERE sequence = ?", arguments: [Int64(bitPattern: chain), sequence])
            }
            try fingerprintRequests(db)
        }
        // v3: the outcome of a store that other stores wait for, recorded before it is released to them, and each
        // request's plans, recorded before its first ACTION: a restart dispatching it again releases the same outcomes
        // to the same stores.
        migrator.registerMigration("v3") { db in
            try db.execute(sql: """
                CREATE TABLE decision (
                    sequence INTEGER NOT NULL,
                    store TEXT NOT NULL,
                    status INTEGER NOT NULL,
                    message TEXT NOT NULL,
                    output BLOB,
                    PRIMARY KEY (sequence, store)
                ) WITHOUT ROWID;
                -- PlanText per action type, by the request's first sequence.
                CREATE TABLE plan (
                    request INTEGER NOT NULL,
                    actionType TEXT NOT NULL,
                    steps TEXT NOT NULL,
                    PRIMARY KEY (request, actionType)
                ) WITHOUT ROWID;
                """)
        }
        // v4: a snapshot's bytes in chunks of their own table, so that the coordinator streams them and never holds a
        // whole state in memory; the snapshot row keeps the metadata (and an empty `state`). Chunks of a snapshot not
        // (yet) recorded in `snapshot` belong to one still being received, and are dropped when the log is opened.
        migrator.registerMigration("v4") { db in
            try db.execute(sql: """
                CREATE TABLE snapshot_chunk (
                    store TEXT NOT NULL,
                    sequence INTEGER NOT NULL,
                    offset INTEGER NOT NULL,
                    bytes BLOB NOT NULL,
                    PRIMARY KEY (store, sequence, offset)
                ) WITHOUT ROWID;
                ALTER TABLE snapshot ADD COLUMN size INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE snapshot ADD COLUMN checksum INTEGER NOT NULL DEFAULT 0;
                """)
            for row in try Row.fetchAll(db, sql: "SELECT store, sequence, state FROM snapshot") {
                let state = [UInt8](row["state"] as Data)
                var offset = 0
                while offset < state.count {
                    let end = min(offset + chunkBytes, state.count)
                    try db.execute(sql: "INSERT INTO snapshot_chunk (store, sequence, offset, bytes) VALUES (?, ?, ?, ?)",
                                   arguments: [row["store"] as String, row["sequence"] as Int64, offset, Data(state[offset..<end])])
                    offset = end
                }
                try db.execute(sql: "UPDATE snapshot SET size = ?, checksum = ?, state = x'' WHERE store = ?", arguments: [
                    state.count, Int64(bitPattern: StateDigest.fnv1a64(state)), row["store"] as String,
                ])
            }
        }
        // v5: actions marked poisoned for a store (a handler crashed its worker on them again and again): replicas
        // skip them there, replaying or catching up.
        migrator.registerMigration("v5") { db in
            try db.execute(sql: """
                CREATE TABLE poison (
                    sequence INTEGER NOT NULL,
                    store TEXT NOT NULL,
                    reason TEXT NOT NULL,
                    markedAt REAL NOT NULL,
                    PRIMARY KEY (sequence, store)
                ) WITHOUT ROWID;
                """)
        }
        // v6: the history each store replays (docs/PROTOCOL.md, "A store's history"): the dispatches planned before it
        // was first seen, from the oldest the log held then. A store from an older log replays none: its replicas
        // started empty, and replaying now would change what they agreed on.
        migrator.registerMigration("v6") { db in
            try db.execute(sql: """
                ALTER TABLE store ADD COLUMN historyFrom INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE store ADD COLUMN historyBefore INTEGER NOT NULL DEFAULT 0;
                """)
        }
        // v7: each snapshot's log chain at its sequence, which SNAPSHOT carries to the worker starting from it (0, not
        // known, for a snapshot recorded before).
        migrator.registerMigration("v7") { db in
            try db.execute(sql: "ALTER TABLE snapshot ADD COLUMN chain INTEGER NOT NULL DEFAULT 0")
        }
        // v8: requests keyed by their first sequence, as every other table of the log is: a lock-step commit appends
        // its request's row to the table's last page, and updates the previous request's answer on the same page,
        // instead of writing pages anywhere in a tree of random request ids and in its index by sequence. The log
        // finds a request id through its index in memory (RequestIDIndex), which it rebuilds from this table.
        migrator.registerMigration("v8") { db in
            try db.execute(sql: """
                CREATE TABLE request_by_first (
                    sequence INTEGER PRIMARY KEY,
                    requestID TEXT NOT NULL,
                    result BLOB,
                    fingerprint INTEGER,
                    actionType TEXT
                );
                INSERT INTO request_by_first (sequence, requestID, result, fingerprint, actionType)
                    SELECT sequence, requestID, result, fingerprint, actionType FROM request;
                DROP TABLE request;
                ALTER TABLE request_by_first RENAME TO request;
                """)
        }
        // v9: which records of log.journal the tables hold (LogJournal): its generation, and the counter of the last
        // record applied. Updated in the transaction that applies them.
        migrator.registerMigration("v9") { db in
            try db.execute(sql: """
                CREATE TABLE journal (
                    id INTEGER PRIMARY KEY CHECK (id = 0),
                    generation INTEGER NOT NULL,
                    counter INTEGER NOT NULL
                );
                INSERT INTO journal (id, generation, counter) VALUES (0, 0, 0);
                """)
        }
        // v10: each store's declaration as its replicas last joined with it (StoreDeclaration in wire layout, its
        // lastApplied 0), so that a restarted coordinator plans with the stores of its previous run before their
        // workers are back, rather than leaving them out of every plan it makes meanwhile.
        migrator.registerMigration("v10") { db in
            try db.execute(sql: "ALTER TABLE store ADD COLUMN declaration BLOB")
        }
        // v11: an outcome row holds a run of completions, from its sequence through `last`, alike but for their
        // sequences (and the payloads their actions' rows hold): a batch's thousand completions are one row, its
        // entry the first's, rather than a thousand. Every row before is a run of one.
        migrator.registerMigration("v11") { db in
            try db.execute(sql: """
                ALTER TABLE outcome ADD COLUMN last INTEGER NOT NULL DEFAULT 0;
                UPDATE outcome SET last = sequence;
                """)
        }
        // v12: a batch's actions in rows of their own, each holding consecutive actions of one batch from its `first`
        // sequence through its `last` (ActionRun, which says how `actions` lays them out): one row for a thousand
        // actions rather than a thousand rows of `action`, which keeps DISPATCH's single actions. A log from before
        // keeps its batches' actions in `action`; the log reads both tables.
        migrator.registerMigration("v12") { db in
            try db.execute(sql: """
                CREATE TABLE action_run (
                    first INTEGER PRIMARY KEY,
                    last INTEGER NOT NULL,
                    epoch INTEGER NOT NULL,
                    origin TEXT NOT NULL,
                    requestID TEXT,
                    batchFirst INTEGER NOT NULL,
                    batchSize INTEGER NOT NULL,
                    loggedAt REAL NOT NULL,
                    actions BLOB NOT NULL
                );
                """)
        }
        return migrator
    }

    /// The chunk size the v4 migration splits existing snapshots into.
    static let chunkBytes = 1 << 20

    /// Gives the request ids of a v1 log their fingerprints, from the actions the log still holds of each (a request
    /// whose actions were compacted away keeps none, and a reuse of its id is not checked).
    private static func fingerprintRequests(_ db: Database) throws {
        let requests = try Row.fetchAll(db, sql: "SELECT requestID, sequence FROM request")
        for request in requests {
            let sequence: UInt64 = request["sequence"]
            let rows = try Row.fetchAll(db, sql: """
                SELECT actionType, payload, error, batchSize FROM action
                WHERE (batchFirst = ?1) OR (sequence = ?1 AND batchFirst IS NULL) ORDER BY sequence
                """, arguments: [sequence])
            let expected = max(rows.first.map { $0["batchSize"] as Int } ?? 0, 1)
            guard !rows.isEmpty, rows.count == expected else { continue }
            let actions = rows.map { BatchAction(actionType: $0["actionType"], payload: [UInt8]($0["payload"] as Data), error: $0["error"]) }
            try db.execute(sql: "UPDATE request SET fingerprint = ?, actionType = ? WHERE requestID = ?", arguments: [
                Int64(bitPattern: RequestFingerprint.of(actions)), actions[0].actionType, request["requestID"] as String,
            ])
        }
    }
}
