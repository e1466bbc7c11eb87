import Foundation
import FluxBusProtocol
import GRDB
import Testing

@testable import FluxBus

/// SQLite applies the journaled commits on its own queue (``ActionLog/applyJournalInBackground()``), off the
/// coordinator's loop: reads still see every write, and a failed application loses nothing and stops the log.
@Suite("The journal's application in the background")
struct BackgroundApplyTests {
    static func rows(_ sql: String, in directory: URL) throws -> [Int64] {
        try DatabaseQueue(path: directory.appendingPathComponent(ActionLog.fileName).path).read { db in try Int64.fetchAll(db, sql: sql) }
    }

    /// Commits as the engine makes them with `--sync off`: each journaled, the owed step run after it.
    static func commit(_ sequences: ClosedRange<UInt64>, to log: ActionLog) throws {
        for sequence in sequences {
            LogJournalTests.dispatch(sequence, to: log)
            if try log.flushDeferringSync() { try log.syncCommitted() }
        }
    }

    /// Once 32 commits wait, the loop hands them to SQLite's queue and goes on; a read afterwards waits for that
    /// application and sees its rows, and so does another connection once the log applied the rest.
    @Test func aReadSeesWhatWasAppliedInTheBackground() throws {
        let directory = LogJournalTests.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let log = try ActionLog(directory: directory.path, sync: .off)
        _ = try log.recover()
        log.beginEpoch(1)
        try Self.commit(1...40, to: log)
        #expect(log.journaledRecords == 8, "the first 32 commits went to SQLite's queue, not the loop's")
        #expect(try log.request("r20")?.answer != nil && log.request("r39")?.answer != nil)
        #expect(try log.entries(in: 1...39, maximum: 100).map(\.sequence) == Array(1...39))
        #expect(try Self.rows("SELECT sequence FROM action ORDER BY sequence", in: directory) == Array(1...40))
    }

    /// An application that fails in the background (here another connection took a table away) lets nothing be
    /// written after it: the next read and the next commit throw a storage error, SQLite's place in the journal stays
    /// where the last good application left it, and a log opened again applies every commit from the journal.
    @Test func aFailedApplicationLosesNothingAndStopsTheLog() throws {
        let directory = LogJournalTests.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent(ActionLog.fileName).path
        do {
            let log = try ActionLog(directory: directory.path, sync: .off)
            _ = try log.recover()
            log.beginEpoch(1)
            try Self.commit(1...32, to: log)
            try log.applyJournal()
            let place = try Self.rows("SELECT counter FROM journal", in: directory)
            try DatabaseQueue(path: file).write { db in try db.execute(sql: "ALTER TABLE decision RENAME TO decision_away") }
            try Self.commit(33...64, to: log)
            #expect(log.journaledRecords == 0, "the second 32 commits were handed to SQLite's queue")
            #expect(throws: BusError.self) { try log.request("r40") }
            LogJournalTests.dispatch(65, to: log)
            let refusal = #expect(throws: BusError.self) { _ = try log.flushDeferringSync() }
            #expect(refusal?.code == .storage)
            #expect(try Self.rows("SELECT counter FROM journal", in: directory) == place, "SQLite's place did not move")
            #expect(try Self.rows("SELECT MAX(sequence) FROM action", in: directory) == [32])
        }
        try DatabaseQueue(path: file).write { db in try db.execute(sql: "ALTER TABLE decision_away RENAME TO decision") }
        let reopened = try ActionLog(directory: directory.path, sync: .off)
        let recovered = try reopened.recover()
        #expect(recovered.journalRecordsApplied == 32)
        #expect(recovered.lastSequence == 64 && recovered.lastCompleted == 63)
        #expect(try reopened.entries(in: 1...63, maximum: 100).map(\.sequence) == Array(1...63))
    }
}
