import Foundation
import FluxBusProtocol
import GRDB

/// The journal ahead of SQLite (``LogJournal``): a group commit on a dispatch's path is one record appended there, and
/// SQLite applies the journaled writes later, many commits in one transaction. Until then they are in ``journaled``,
/// and every read of SQLite applies them first, so that no read misses one.
extension ActionLog {
    /// Journaled commits that SQLite applies in one transaction: at most this many wait, and at most
    /// ``journaledBytesBeforeApplying`` bytes of them, besides one tick (50 ms).
    static let journaledRecordsBeforeApplying = 32
    static let journaledBytesBeforeApplying = 256 << 10

    /// Whether SQLite should apply the journaled writes now, rather than at the next tick.
    var isApplyDue: Bool {
        journaledRecords >= Self.journaledRecordsBeforeApplying || journaledBytes >= Self.journaledBytesBeforeApplying
    }

    /// The most writes a journaled commit holds: a lock-step dispatch's commit has five, a batch's a handful (its
    /// actions are one write, ``ActionRun``). A larger one (many requests') already shares its SQLite transaction among
    /// many writes, and journaling it first only added work: 7,000 instructions a batched action when each of a
    /// batch's actions was a write of its own (callgrind, `FluxInstructions batch 20000 durable`).
    static let journaledWritesAtMost = 64

    /// The buffered writes as one journal record, and the time of their commit, when a publication waits for them (an
    /// ACTION for its action, a RELEASE for its decision), they are few, they all go to the journal, and the record
    /// takes at most a quarter of it; nil sends them to SQLite directly (outcomes and answers alone, snapshots,
    /// compaction, a batch too large for the journal).
    func journalRecord() -> (body: [UInt8], at: Double, blobs: [[UInt8]?])? {
        guard let journal, buffer.writes.count <= Self.journaledWritesAtMost,
            buffer.writes.contains(where: { switch $0 { case .action, .actions, .decision: true; default: false } }),
            actionsFollowInOrder(buffer.writes)
        else { return nil }
        let now = Date().timeIntervalSince1970
        guard let (body, blobs) = JournalWrite.encode(buffer.writes, at: now, codec: codec),
            LogJournal.footprint(body.count) <= journal.capacity / 4
        else { return nil }
        return (body, now, blobs)
    }

    /// Appends the buffered writes to the journal as one record: they are committed from then on, as a killed process
    /// goes; with `--sync always`, ``syncCommitted()`` makes them survive a power cut.
    func journalBuffer(_ record: (body: [UInt8], at: Double, blobs: [[UInt8]?])) throws {
        guard let journal else { return }
        let body = record.body
        let started = metrics == nil ? nil : ContinuousClock.now
        if !journal.fits(body.count) { try restartJournal() }
        _ = try journal.append(body)
        let writes = buffer.takeWrites()
        for write in writes { indexRequestID(of: write) }
        noteActions(in: writes)
        journaled.append(JournalRecord(writes: writes, at: record.at, blobs: record.blobs))
        journaledBytes += body.count
        if let started { metrics?.committed(in: .now - started) }
    }

    /// Whether the actions among `writes` come after the last one committed, in order.
    private func actionsFollowInOrder(_ writes: [LogWrite]) -> Bool {
        var last = lastCommittedAction
        for write in writes {
            guard let sequences = write.loggedSequences else { continue }
            guard sequences.lowerBound > last else { return false }
            last = sequences.upperBound
        }
        return true
    }

    func noteActions(in writes: [LogWrite]) {
        for write in writes {
            if let sequences = write.loggedSequences { lastCommittedAction = max(lastCommittedAction, sequences.upperBound) }
        }
    }

    /// Has SQLite apply the journaled writes it does not hold yet, in one transaction. Before every read of SQLite, at
    /// every tick, and once enough wait (``isApplyDue``).
    /// - Throws: ``BusError`` (`storage`) when SQLite cannot write them.
    func applyJournal() throws {
        guard !journaled.isEmpty else { return }
        do {
            if let metrics { try metrics.timingApply { try applyToSQLite([]) } } else { try applyToSQLite([]) }
        } catch {
            throw writeFailure(error)
        }
    }

    /// Runs the journaled writes SQLite does not hold yet and then `writes` in one transaction, which also records how
    /// far SQLite holds the journal: under `generation` when the journal is about to start again.
    func applyToSQLite(_ writes: [LogWrite], generation: UInt64? = nil) throws {
        let place = journal.map { (generation: generation ?? $0.generation, counter: $0.lastCounter) }
        let recordsPlace = !journaled.isEmpty || generation != nil
        var records = journaled
        if !writes.isEmpty {
            records.append(JournalRecord(encoding: writes, at: Date().timeIntervalSince1970, codec: codec))
        }
        let settled = SettledWrites(records.lazy.map { $0.writes })
        let answers = FoldedAnswers(records)
        try database.writeWithoutTransaction { db in
            try statements.transaction(in: db) {
                for record in records {
                    for (write, blob) in record.writesWithBlobs where !settled.isDead(write) && !answers.isFolded(write) {
                        // An action's request row takes the answer that folds into it; other writes their own blob.
                        let row = write.requestRow.map { answers.answer(forRowOf: $0.requestID, at: $0.sequence) } ?? blob
                        try write.perform(in: db, codec: codec, statements: statements, at: record.at, blob: row)
                    }
                }
                if recordsPlace, let place {
                    var row = RowBinder(try statements.journal(in: db))
                    row.integer(place.generation)
                    row.integer(place.counter)
                    try row.run(in: db)
                }
            }
        }
        journaled.removeAll(keepingCapacity: true)
        journaledBytes = 0
        countCommit()
    }

    /// Starts the journal again from its start under a new generation, once SQLite holds everything it held: durably,
    /// unless `--sync off`, since the records it overwrites are then gone.
    func restartJournal() throws {
        guard let journal else { return }
        let generation = UInt64.random(in: 1...UInt64.max)
        do {
            try applyToSQLite([], generation: generation)
            if sync != .off { try walSync?.sync() }
        } catch let error as BusError {
            throw error
        } catch {
            throw writeFailure(error)
        }
        journal.restart(generation: generation, after: journal.lastCounter)
    }

    /// At opening: applies what a previous run journaled and SQLite did not hold (it stopped, or lost power, before
    /// SQLite applied it), then starts the journal again.
    /// - Returns: how many records were applied.
    /// - Throws: ``BusError`` (`storage`) when the journal cannot be read; ``LogDamage`` when a whole record of this
    ///   log's generation does not decode.
    func replayJournal() throws -> Int {
        guard let journal else { return 0 }
        let row = try database.read { db in try Row.fetchOne(db, sql: "SELECT generation, counter FROM journal WHERE id = 0") }
        let generation = UInt64(bitPattern: row?["generation"] ?? 0)
        let counter = UInt64(bitPattern: row?["counter"] ?? 0)
        let records = generation == 0 ? [] : try journal.records(of: generation, after: counter)
        for record in records {
            do {
                let (writes, blobs, at) = try JournalWrite.decode(record.body, codec: codec)
                // A record written before records said their time takes the time it is applied.
                journaled.append(JournalRecord(writes: writes, at: at ?? Date().timeIntervalSince1970, blobs: blobs))
            } catch {
                throw LogDamage(detail: "record \(record.counter) of \(journal.path) is whole but cannot be read: \(error)")
            }
        }
        journal.restart(generation: generation, after: records.last?.counter ?? counter)
        try restartJournal()
        return records.count
    }

    func writeFailure(_ error: any Error) -> BusError {
        if let error = error as? BusError { return error }
        return BusError(code: .storage, message: "cannot write the log\(path.map { " \($0)" } ?? ""): \(error). "
            + "The coordinator stops rather than publish what it could not log; check the disk (space, permissions, "
            + "errors in the system log), then start it again: it resumes from what was committed")
    }
}
