import Foundation
import FluxBusProtocol
import GRDB
import Testing

@testable import FluxBus

/// The journal ahead of SQLite (``LogJournal``): a commit is one record appended there, and SQLite applies it later.
/// Whatever the journal holds that SQLite does not, a log opened again applies, exactly as SQLite would have; what is
/// torn, stale or out of order, it does not.
@Suite("The log's journal")
struct LogJournalTests {
    static let action = BatchAction(actionType: "counter.add", payload: Array(#"{"by":1}"#.utf8))

    static func directory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("fluxbus-journal-\(UUID().uuidString.prefix(8))")
    }

    /// One lock-step dispatch's writes, as the coordinator makes them: the action, its request and plan, and the
    /// previous dispatch's completion, decision and answer.
    static func dispatch(_ sequence: UInt64, to log: ActionLog) {
        log.append(sequence: sequence, epoch: 1, action: action, origin: "c", requestID: "r\(sequence)", batch: nil, fingerprint: sequence)
        log.recordPlans([action.actionType: [PlanStep(store: "counter")]], request: sequence)
        guard sequence > 1 else { return }
        log.recordDecision(StoreOutput(store: "counter", status: .ok, output: Array("\(sequence)".utf8)), sequence: sequence - 1)
        log.complete(ReplayEntry(
            epoch: 1, sequence: sequence - 1, actionType: action.actionType, payload: action.payload,
            plan: [PlanStep(store: "counter")], outputs: [StoreOutput(store: "counter", status: .ok, output: [1])]))
        log.recordAnswer(.result(.init(requestID: "r\(sequence - 1)", epoch: 1, sequence: sequence - 1, elapsedMicros: 9, outcomes: [])),
                         for: "r\(sequence - 1)", sequence: sequence - 1)
    }

    /// What the tables hold, row by row, but the times of writing.
    static func rows(in directory: URL) throws -> [String] {
        let queue = try DatabaseQueue(path: directory.appendingPathComponent(ActionLog.fileName).path)
        return try queue.read { db in
            try ["SELECT sequence, epoch, actionType, hex(payload), requestID, chain FROM action ORDER BY sequence",
                 "SELECT first, last, epoch, origin, requestID, batchFirst, batchSize, hex(actions) FROM action_run ORDER BY first",
                 "SELECT sequence, last, hex(entry) FROM outcome ORDER BY sequence",
                 "SELECT sequence, requestID, hex(result), fingerprint FROM request ORDER BY sequence",
                 "SELECT request, actionType, steps FROM plan ORDER BY request",
                 "SELECT sequence, store, status, hex(output) FROM decision ORDER BY sequence",
                 "SELECT epoch FROM epoch ORDER BY epoch"]
                .flatMap { sql in try Row.fetchAll(db, sql: sql).map { "\($0)" } }
        }
    }

    /// SQLite's rows of a journaled commit say when it was committed, not when SQLite applied it: after a restart,
    /// those times would otherwise be the restart's. Stores first seen in the same commit share its time, and keep
    /// the order they were seen in.
    @Test func aReplayedCommitKeepsItsTimeAndItsOrder() throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let beforeCommits = Date().timeIntervalSince1970
        do {
            let log = try ActionLog(directory: directory.path, sync: .off)
            _ = try log.recover()
            log.beginEpoch(1)
            _ = try log.flushDeferringSync()
            for sequence in UInt64(1)...5 {
                if sequence == 2 { for store in ["zeta", "alpha", "mu"] { log.rememberStore(store, history: StoreHistory(from: 1, before: 2)) } }
                Self.dispatch(sequence, to: log)
                _ = try log.flushDeferringSync()
            }
            #expect(log.journaledRecords == 5, "the five dispatches wait in the journal alone")
        }
        let afterCommits = Date().timeIntervalSince1970
        Thread.sleep(forTimeInterval: 0.05)  // so that a time taken at the replay could not pass for one of the commits'
        let reopened = try ActionLog(directory: directory.path, sync: .off)
        let recovered = try reopened.recover()
        #expect(recovered.journalRecordsApplied == 5)
        #expect(recovered.stores == ["zeta", "alpha", "mu"])
        let times = try DatabaseQueue(path: directory.appendingPathComponent(ActionLog.fileName).path).read { db in
            try Double.fetchAll(db, sql: "SELECT loggedAt FROM action UNION ALL SELECT completedAt FROM outcome")
        }
        #expect(times.count == 9, "five actions, four completions")
        for time in times { #expect(time >= beforeCommits && time <= afterCommits, "\(time) not in \(beforeCommits)...\(afterCommits)") }
    }

    /// A log killed after its commits reached the journal, before SQLite applied them: opened again, it applies them,
    /// and its tables hold row for row what a log that applied them itself holds.
    @Test func whatOnlyTheJournalHeldIsAppliedAtOpening() throws {
        let (killed, applied) = (Self.directory(), Self.directory())
        defer { for directory in [killed, applied] { try? FileManager.default.removeItem(at: directory) } }
        for directory in [killed, applied] {
            let log = try ActionLog(directory: directory.path, sync: .off)
            _ = try log.recover()
            log.beginEpoch(1)
            for sequence in UInt64(1)...20 {
                Self.dispatch(sequence, to: log)
                _ = try log.flushDeferringSync()
            }
            #expect(log.journaled.count > 0, "fewer commits than SQLite waits for: the journal alone holds them")
            if directory == applied { try log.applyJournal() }
        }
        #expect(try Self.rows(in: killed).filter { $0.contains("counter.add") }.isEmpty, "SQLite never saw the killed log's actions")
        do {
            let reopened = try ActionLog(directory: killed.path, sync: .off)
            let recovered = try reopened.recover()
            #expect(recovered.journalRecordsApplied == 20)
            #expect(recovered.lastSequence == 20 && recovered.lastCompleted == 19)
            #expect(try reopened.request("r19")?.answer != nil && reopened.request("r20")?.fingerprint == 20)
            #expect(try reopened.entries(in: 1...19, maximum: 100).count == 19)
            #expect(try Self.rows(in: killed) == Self.rows(in: applied))
        }
        let again = try ActionLog(directory: killed.path, sync: .off)
        #expect(try again.recover().journalRecordsApplied == 0, "applied once, never again")
    }

    /// The journal starts again from its start once full, after SQLite took everything it held: a log killed after
    /// many such laps recovers every commit, and none twice.
    @Test func aJournalThatStartedAgainManyTimesLosesNothing() throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        do {
            let log = try ActionLog(directory: directory.path, sync: .always, journalCapacity: 16 << 10)
            _ = try log.recover()
            for sequence in UInt64(1)...500 {
                Self.dispatch(sequence, to: log)
                if try log.flushDeferringSync() { try log.syncCommitted() }
            }
        }
        let reopened = try ActionLog(directory: directory.path, sync: .always, journalCapacity: 16 << 10)
        let recovered = try reopened.recover()
        #expect(recovered.lastSequence == 500 && recovered.lastCompleted == 499)
        #expect(recovered.pending.map(\.sequence) == [500])
        let entries = try reopened.entries(in: 1...499, maximum: 1_000)
        #expect(entries.map(\.sequence) == Array(1...499), "every completion once, in order, each checked against the chain")
    }

    /// A record damaged on disk (a torn write, a flipped bit) is not applied, and neither is anything after it: a
    /// later record cannot be applied without the one before. The log then holds less than its mark says it had
    /// committed, and does not start, naming the journal, until `--new-bus` goes on from what it holds.
    @Test func aDamagedRecordStopsTheReplayThere() throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var offsets: [Int] = []
        do {
            let log = try ActionLog(directory: directory.path, sync: .off)
            _ = try log.recover()
            for sequence in UInt64(1)...6 {
                Self.dispatch(sequence, to: log)
                _ = try log.flushDeferringSync()
                offsets.append(log.journal!.offset)
            }
        }
        // A byte of the fourth record's body (it starts on a page; the rest of its page is padding).
        let file = try FileHandle(forUpdating: directory.appendingPathComponent(LogJournal.fileName))
        let middle = UInt64(offsets[2] + LogJournal.headerBytes + 40)
        try file.seek(toOffset: middle)
        let byte = [UInt8](try file.read(upToCount: 1) ?? Data([0]))
        try file.seek(toOffset: middle)
        try file.write(contentsOf: [byte[0] ^ 0xFF])
        try file.close()
        do {
            let reopened = try ActionLog(directory: directory.path, sync: .off)
            let error = #expect(throws: BusError.self) { try reopened.recover() }
            #expect(error?.message.contains("the log ends at #3, but it had committed through #6") == true, "\(String(describing: error))")
            #expect(error?.message.contains("log.journal") == true)
        }
        let reopened = try ActionLog(directory: directory.path, sync: .off, newBus: true)
        let recovered = try reopened.recover()
        #expect(recovered.lastSequence == 3)
        #expect(recovered.lastCompleted == 2 && recovered.pending.map(\.sequence) == [3])
    }

    /// The journal's reader on its own: only the run of one generation that continues from what SQLite holds.
    @Test func onlyTheRunThatContinuesFromSQLiteIsRead() throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let page = LogJournal.pageBytes
        let journal = try LogJournal(directory: directory.path, capacity: 4 * page)
        journal.restart(generation: 7, after: 10)
        for body in [[1], [2, 2], [3, 3, 3]] as [[UInt8]] {
            _ = try journal.append(body)
            // Whole pages: a small write into a large folio of the page cache made each fsync write the whole file.
            #expect(journal.offset % page == 0)
        }
        #expect(try journal.records(of: 7, after: 10).map(\.counter) == [11, 12, 13])
        #expect(try journal.records(of: 7, after: 12).map(\.body) == [[3, 3, 3]])
        #expect(try journal.records(of: 7, after: 13).isEmpty, "SQLite holds them all")
        #expect(try journal.records(of: 7, after: 9).isEmpty, "a gap: SQLite lacks #10, which the journal never had")
        #expect(try journal.records(of: 8, after: 10).isEmpty, "another generation's records are stale")
        // Started again under another generation: the old records beyond the new ones are never read as its own.
        journal.restart(generation: 9, after: 13)
        _ = try journal.append([4])
        #expect(try journal.records(of: 9, after: 13).map(\.counter) == [14])
        #expect(journal.offset == page)
        #expect(journal.fits(3 * page - LogJournal.headerBytes) && !journal.fits(3 * page))
    }

    /// A commit the journal takes is the coordinator's to publish at once; its sync, with `--sync always`, is owed
    /// until ``ActionLog/syncCommitted()``, and so is the mark. Without a data directory there is no journal.
    @Test(arguments: LogSync.allCases)
    func aJournaledCommitOwesItsSyncOnlyWithSyncAlways(_ sync: LogSync) throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let log = try ActionLog(directory: directory.path, sync: sync)
        _ = try log.recover()
        Self.dispatch(1, to: log)
        #expect(try log.flushDeferringSync() == (sync == .always))
        #expect(log.journaledRecords == 1)
        #expect(try ActionLog(directory: nil, sync: sync).journal == nil)
    }
}
