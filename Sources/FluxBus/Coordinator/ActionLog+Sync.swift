import GRDB

/// How the log's commits reach the disk: the checkpoints of every tick, SQLite's `synchronous` level for each mode,
/// and the WAL's truncation.
extension ActionLog {
    /// The WAL's size after a checkpoint, at most: journal_size_limit.
    static let walLimitBytes = 4 << 20
    /// Commits between two truncating checkpoints.
    static let commitsPerTruncation = 2_000

    /// SQLite's `synchronous` level for a sync mode: NORMAL (1) for `always` and `batch`, OFF (0) for `off`. With
    /// `always`, ``WALSync`` syncs the WAL after each commit instead of SQLite inside it.
    static func synchronousLevel(_ sync: Sync) -> Int {
        switch sync {
        case .always, .batch: 1
        case .off: 0
        }
    }

    /// Counts a SQLite commit, toward the checkpoints of ``syncIfBatched()``.
    func countCommit() {
        commitsSinceCheckpoint += 1
        commitsSinceTruncation += 1
    }

    /// Every tick: SQLite applies the journaled writes, and in batch mode syncs what was committed since the last call
    /// (a passive WAL checkpoint syncs the WAL first).
    /// - Throws: ``BusError`` (`storage`) when SQLite cannot apply the journaled writes, or when that checkpoint fails
    ///   in batch mode, where it is the log's only sync: the coordinator must stop, as for a failed sync in the other
    ///   modes. ``CheckpointFailure`` when only the WAL's periodic truncation failed in another mode: the WAL is synced
    ///   anyway, it just stays large.
    func syncIfBatched() throws {
        guard directory != nil else { return }
        try applyJournal()
        // Past half full, the journal starts again here, between dispatches, rather than on one's path once full.
        if let journal, journal.offset > journal.capacity / 2 { try restartJournal() }
        if commitsSinceTruncation >= Self.commitsPerTruncation {
            // Every few thousand commits, fold the WAL into the file and cut it back, so that it does not keep the
            // size of the largest burst (syncs the WAL too).
            commitsSinceTruncation = 0
            commitsSinceCheckpoint = 0
            return try checkpoint(.truncate)
        }
        guard sync == .batch, commitsSinceCheckpoint > 0 else { return }
        commitsSinceCheckpoint = 0
        try checkpoint(.passive)
    }

    private func checkpoint(_ kind: Database.CheckpointMode) throws {
        let started = metrics == nil ? nil : ContinuousClock.now
        do {
            _ = try database.writeWithoutTransaction { db in try db.checkpoint(kind) }
        } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY {
            // A reader outside this process (an operator's sqlite3) holds the WAL: a truncation waits for the next
            // try, and a passive checkpoint, which never reports busy, has synced the WAL regardless.
            return
        } catch {
            guard sync == .batch else { throw CheckpointFailure(description: "\(error)") }
            throw BusError(code: .storage, message: "cannot sync the log at \(path ?? "in memory") (its WAL checkpoint failed): \(error)")
        }
        if let started { metrics?.checkpointed(in: .now - started) }
    }

    /// The WAL's periodic checkpoint failed where it is not the log's sync (``syncIfBatched()``).
    struct CheckpointFailure: Error, CustomStringConvertible {
        let description: String
    }
}
