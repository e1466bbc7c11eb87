import Foundation
import FluxBusProtocol
import GRDB
import Testing

@testable import FluxBus

@Suite("The action log on disk")
struct ActionLogTests {
    /// `--sync` must reach SQLite: GRDB puts a WAL database in NORMAL when it opens it, which once silently turned
    /// `always` into `batch`. `always` runs at NORMAL too now, and syncs the WAL itself after each commit
    /// (``WALSync``; the test below and SyncTests' traced fsyncs show it).
    @Test("each --sync mode is the synchronous level SQLite runs with", arguments: LogSync.allCases)
    func syncModeReachesSQLite(_ sync: LogSync) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fluxbus-log-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: directory) }
        let log = try ActionLog(directory: directory.path, sync: sync)
        #expect(try log.synchronousSetting() == ActionLog.synchronousLevel(sync))
        #expect(ActionLog.synchronousLevel(sync) == ["always": 1, "batch": 1, "off": 0][sync.rawValue])
    }

    /// With `--sync always` the coordinator may publish a commit's actions before its sync (``ActionLog/flushDeferringSync()``):
    /// the sync is owed until ``ActionLog/syncCommitted()``, and the mark beside the log waits for it, so that it never
    /// names what the disk may not hold. The other modes owe nothing.
    @Test("the mark waits for a deferred sync", arguments: LogSync.allCases)
    func theMarkWaitsForTheDeferredSync(_ sync: LogSync) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fluxbus-log-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: directory) }
        let log = try ActionLog(directory: directory.path, sync: sync)
        _ = try log.recover()
        let mark = try LogMark(directory: directory.path)
        log.append(sequence: 1, epoch: 1, action: BatchAction(actionType: "a", payload: []), origin: "test", requestID: "r1",
                   batch: nil, fingerprint: 1)
        let owed = try log.flushDeferringSync()
        #expect(owed == (sync == .always))
        #expect(try mark.read()?.sequence == (owed ? 0 : 1), "the mark moves only with the sync")
        try log.syncCommitted()
        #expect(try mark.read()?.sequence == 1)
        #expect(try log.flushDeferringSync() == false, "nothing new to commit")
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("log.sqlite-wal").path))
    }

    /// Every dispatch brings a fresh request id. Looking each up with a SELECT that always misses was SQLite's share of
    /// an in-memory coordinator's profile (issue 17): a fresh id is answered from the in-memory index, and only an id
    /// the log may hold reaches SQL, also after a restart and after compaction dropped ids.
    @Test func aFreshRequestIDCostsNoSQL() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fluxbus-log-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: directory) }
        let action = BatchAction(actionType: "counter.add", payload: Array(#"{"by":1}"#.utf8))
        do {
            let log = try ActionLog(directory: directory.path, sync: .off)
            _ = try log.recover()
            for sequence in 1...3_000 as ClosedRange<UInt64> {
                log.append(sequence: sequence, epoch: 1, action: action, origin: "test", requestID: "r\(sequence)", batch: nil, fingerprint: 7)
            }
            try log.flush()
            for index in 0..<1_000 { #expect(try log.request("fresh-\(index)") == nil) }
            #expect(log.requestIDs.logLookups == 0, "a fresh id never reaches SQL")
            #expect(try log.request("r42")?.fingerprint == 7)
            #expect(log.requestIDs.logLookups == 1)
            // Compaction keeps the newest 10 ids; the next rebuild drops the others from the index too.
            log.compact(through: 2_990, keepRequests: 10)
            try log.flush()
            try log.rebuildRequestIDs()
            #expect(try log.request("r42") == nil)
            #expect(log.requestIDs.logLookups == 1, "a compacted id no longer reaches SQL")
            #expect(try log.request("r2995")?.fingerprint == 7)
        }
        let reopened = try ActionLog(directory: directory.path, sync: .off)
        _ = try reopened.recover()
        #expect(try reopened.request("r3000")?.fingerprint == 7, "the index is rebuilt from the log at start")
        #expect(try reopened.request("fresh") == nil)
        #expect(reopened.requestIDs.logLookups == 1)
    }

    /// A group commit runs in a transaction the log opens itself, with statements prepared once, not through GRDB's
    /// `write`: a commit that fails must still leave nothing of itself behind, and no transaction open for the next.
    @Test func aFailedGroupCommitWritesNothing() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fluxbus-log-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: directory) }
        let action = BatchAction(actionType: "counter.add", payload: Array(#"{"by":1}"#.utf8))
        let log = try ActionLog(directory: directory.path, sync: .off)
        _ = try log.recover()
        log.append(sequence: 1, epoch: 1, action: action, origin: "test", requestID: "r1", batch: nil, fingerprint: 7)
        try log.flush()
        // #2 is sound; a second #1 collides with the committed row, so the whole commit must fail.
        log.append(sequence: 2, epoch: 1, action: action, origin: "test", requestID: "r2", batch: nil, fingerprint: 7)
        log.recordPlans(["counter.add": []], request: 2)
        log.append(sequence: 1, epoch: 1, action: action, origin: "test", requestID: "r1-again", batch: nil, fingerprint: 7)
        #expect(throws: BusError.self) { try log.flush() }
        let (actions, plans, requests, open) = try log.database.inDatabase { db in
            (try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM action"), try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM plan"),
             try String.fetchAll(db, sql: "SELECT requestID FROM request ORDER BY requestID"), db.isInsideTransaction)
        }
        #expect(actions == 1 && plans == 0 && requests == ["r1"], "nothing of the failed commit was kept")
        #expect(!open, "no transaction is left open")
    }

    /// The mark is rewritten after every commit from bytes, not a formatted string: each field keeps its width.
    @Test(arguments: [(UInt64(0), UInt64(0)), (1, 0xabc), (12_345_678_901, 0x0123_4567_89ab_cdef), (.max, .max)])
    func aMarkRecordKeepsItsLayout(_ sequence: UInt64, _ chain: UInt64) throws {
        let mark = LogHighWater(busID: String(repeating: "0f", count: 16), sequence: sequence, chain: chain)
        let text = String(decoding: LogMark.record(mark), as: UTF8.self)
        let digits = String(sequence)
        let hex = String(chain, radix: 16)
        #expect(text == "fluxbus-log-mark v1 bus=\(mark.busID) sequence=\(String(repeating: "0", count: 20 - digits.count))\(digits) "
            + "chain=\(String(repeating: "0", count: 16 - hex.count))\(hex)\n")
        #expect(text.utf8.count == 110)
        #expect(LogMark.parse(text) == mark)
    }
}
