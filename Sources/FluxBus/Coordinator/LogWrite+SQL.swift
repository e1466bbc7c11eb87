import Foundation
import FluxBusProtocol
import GRDB

/// How ``ActionLog``'s group commit applies each buffered write: SQL, one statement or a few per write.
extension LogWrite {
    /// Runs the write in the transaction of a group commit; `codec` encodes the records the write holds,
    /// `statements` holds the hot path's prepared statements, and `now` (seconds since 1970) is the time of the
    /// commit, which a journaled write keeps until SQLite applies it. `blob` is what the row takes as bytes: a
    /// completion's entry and an answer's body (``encodedBlob(_:)``), or the answer that an action's request row is
    /// written with (``FoldedAnswers``).
    func perform(in db: Database, codec: Codec, statements: LogStatements, at now: Double, blob: [UInt8]?) throws {
        switch self {
        case .epoch(let epoch):
            try db.cachedStatement(sql: "INSERT INTO epoch (epoch, startedAt) VALUES (?, ?)").execute(arguments: [epoch, now])
        case .action(let sequence, let epoch, let action, let origin, let requestID, let batch, let chain, let fingerprint):
            // The hot path: one row per action, bound straight through SQLite's C API.
            var row = RowBinder(try statements.action(in: db))
            row.integer(sequence)
            row.integer(epoch)
            row.text(action.actionType, boundBefore: &statements.actionTypeBound)
            row.blob(action.payload)
            row.text(action.error)
            row.text(origin, boundBefore: &statements.originBound)
            row.text(requestID.isEmpty ? nil : requestID)
            if let batch { row.integer(batch.first) } else { row.null() }
            row.integer(UInt64(batch?.size ?? 0))
            row.real(now)
            row.integer(chain)
            try row.run(in: db)
            if let (requestID, first) = requestRow {
                var request = RowBinder(try statements.request(in: db))
                request.text(requestID)
                request.integer(first)
                request.integer(fingerprint)
                request.text(action.actionType)
                request.blob(blob)
                try request.run(in: db)
            }
        case .actions(let run):
            // A batch's actions in one row (ActionRun): one b-tree insert for them all, where a row each cost SQLite
            // more than everything else the coordinator does for a batched action.
            var row = RowBinder(try statements.actionRun(in: db))
            row.integer(run.first)
            row.integer(run.last)
            row.integer(run.epoch)
            row.text(run.origin)
            row.text(run.requestID.isEmpty ? nil : run.requestID)
            row.integer(run.batchFirst)
            row.integer(UInt64(run.batchSize))
            row.real(now)
            row.blob(run.encodedActions)
            try row.run(in: db)
            if let (requestID, first) = run.requestRow {
                var request = RowBinder(try statements.request(in: db))
                request.text(requestID)
                request.integer(first)
                request.integer(run.fingerprint)
                request.text(run.actions[0].actionType)
                request.blob(blob)
                try request.run(in: db)
            }
        case .completion(let entry, let last):
            // A row of its own: updating the action's row would write its payload again. One row for the whole run:
            // the entry of each sequence in it is the first's with that sequence (ActionLog+Reading.swift).
            var row = RowBinder(try statements.outcome(in: db))
            row.integer(entry.sequence)
            row.integer(last)
            row.blob(blob ?? encodedBlob(codec))
            row.real(now)
            try row.run(in: db)
        case .decision(let sequence, let output):
            // On the path of every dependency edge: its commit comes before the RELEASE.
            var row = RowBinder(try statements.decision(in: db))
            row.integer(sequence)
            row.text(output.store)
            row.integer(UInt64(output.status.rawValue))
            row.text(output.message)
            row.blob(output.output)
            try row.run(in: db)
        case .plans(let request, let plans):
            for (actionType, steps) in plans {
                var row = RowBinder(try statements.plan(in: db))
                row.integer(request)
                row.text(actionType)
                row.text(PlanText.encode(steps))
                try row.run(in: db)
            }
        case .answer(let requestID, let sequence, _):
            var row = RowBinder(try statements.answer(in: db))
            row.text(requestID)
            row.integer(sequence)
            row.blob(blob ?? encodedBlob(codec))
            try row.run(in: db)
        case .store(let name, let history):
            try db.cachedStatement(sql: "INSERT OR IGNORE INTO store (name, firstSeen, historyFrom, historyBefore) VALUES (?, ?, ?, ?)")
                .execute(arguments: [name, now, history.from, history.before])
        case .declaration(let declaration):
            try db.cachedStatement(sql: "UPDATE store SET declaration = ? WHERE name = ?")
                .execute(arguments: [Data(codec.encodeRecord(declaration)), declaration.name])
        case .poison(let mark):
            try db.cachedStatement(sql: "INSERT OR IGNORE INTO poison (sequence, store, reason, markedAt) VALUES (?, ?, ?, ?)")
                .execute(arguments: [mark.sequence, mark.store, mark.reason, now])
        case .snapshot(let snapshot):
            try db.cachedStatement(sql: """
                INSERT OR REPLACE INTO snapshot (store, sequence, digest, state, worker, takenAt, size, checksum, chain)
                VALUES (?, ?, ?, x'', ?, ?, ?, ?, ?)
                """).execute(arguments: [
                    snapshot.store, snapshot.sequence, Int64(bitPattern: snapshot.digest), snapshot.worker, now,
                    Int64(bitPattern: snapshot.size), Int64(bitPattern: snapshot.checksum), Int64(bitPattern: snapshot.chain),
                ])
            try db.cachedStatement(sql: "DELETE FROM snapshot_chunk WHERE store = ? AND sequence <> ?")
                .execute(arguments: [snapshot.store, snapshot.sequence])
        case .snapshotBegin(let store, let sequence), .snapshotAbandon(let store, let sequence):
            // Never the recorded snapshot's own chunks: a snapshot is only received at a later sequence.
            try db.cachedStatement(sql: """
                DELETE FROM snapshot_chunk WHERE store = ?1 AND sequence = ?2
                AND NOT EXISTS (SELECT 1 FROM snapshot WHERE store = ?1 AND sequence = ?2)
                """).execute(arguments: [store, sequence])
        case .snapshotChunk(let store, let sequence, let offset, let bytes):
            var row = RowBinder(try db.cachedStatement(sql: """
                INSERT OR REPLACE INTO snapshot_chunk (store, sequence, offset, bytes) VALUES (?, ?, ?, ?)
                """))
            row.text(store)
            row.integer(sequence)
            row.integer(offset)
            row.blob(bytes)
            try row.run(in: db)
        case .compaction(let through, let keepRequests):
            try db.execute(sql: "DELETE FROM action WHERE sequence <= ?", arguments: [through])
            try db.execute(sql: "DELETE FROM action_run WHERE last <= ?", arguments: [through])
            try Self.trimRun(startingAtOrBefore: through, db)
            // A run of completions that goes on past `through` keeps its row, which starts after it from now on.
            try db.execute(sql: "DELETE FROM outcome WHERE last <= ?", arguments: [through])
            try db.execute(sql: "UPDATE outcome SET sequence = ?1 + 1 WHERE sequence <= ?1", arguments: [through])
            try db.execute(sql: "DELETE FROM decision WHERE sequence <= ?", arguments: [through])
            // Plans of requests that completed: every request that still has an action to run starts later.
            try db.execute(sql: """
                WITH completed(through) AS (SELECT COALESCE((SELECT last FROM outcome ORDER BY sequence DESC LIMIT 1), 0))
                DELETE FROM plan WHERE request < COALESCE((SELECT MIN(request) FROM (
                    SELECT COALESCE(batchFirst, sequence) AS request FROM action, completed WHERE sequence > completed.through
                    UNION ALL SELECT batchFirst FROM action_run, completed WHERE last > completed.through)), ?)
                """, arguments: [through + 1])
            try db.execute(sql: """
                DELETE FROM request WHERE sequence < (SELECT sequence FROM request ORDER BY sequence DESC LIMIT 1 OFFSET ?)
                """, arguments: [max(0, keepRequests - 1)])
        }
    }

    /// Drops the actions up to `through` from the run of actions that goes on past it, if one does: the log keeps no
    /// action at or before a compacted sequence, in either table.
    private static func trimRun(startingAtOrBefore through: UInt64, _ db: Database) throws {
        guard let row = try Row.fetchOne(db, sql: "SELECT first, last, actions FROM action_run WHERE first <= ?1 AND last > ?1",
                                         arguments: [through])
        else { return }
        let (first, last): (UInt64, UInt64) = (row["first"], row["last"])
        let bytes = [UInt8](row["actions"] as Data)
        let kept = try bytes.withUnsafeBufferPointer { try ActionRun.decode($0, count: Int(last - first + 1), first: first) }
            .dropFirst(Int(through - first + 1))
        try db.execute(sql: "UPDATE action_run SET first = ?, actions = ? WHERE first = ?", arguments: [
            through + 1, Data(ActionRun.encoded(kept.map { ($0.action, $0.chain) })), first,
        ])
    }
}
