import Foundation
import FluxBusProtocol
import GRDB
import Testing

@testable import FluxBus

/// Schema v11: an `outcome` row holds a run of completions alike but for their sequences and payloads, so that a batch's
/// thousand completions are one row rather than a thousand (docs/BENCHMARKS.md, "A batch's completions in one row").
/// Whatever the rows, every completed entry reads back exactly as it was completed, in both layouts FETCH serves,
/// across compaction inside a run and across a reopening; and rows that overlap are damage, refused at opening.
@Suite("Runs of completions in one outcome row")
struct OutcomeRunTests {
    static let codec = Codec()

    static func directory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("fluxbus-runs-\(UUID().uuidString.prefix(8))")
    }

    static func action(_ sequence: UInt64) -> BatchAction {
        BatchAction(actionType: "counter.add", payload: Array(#"{"by":\#(sequence)}"#.utf8))
    }

    static let plan = [PlanStep(store: "counter")]

    /// The entry the engine records for `sequence`: ok, unless it is one of `failing`.
    static func entry(_ sequence: UInt64, failing: Set<UInt64> = []) -> ReplayEntry {
        let output = failing.contains(sequence)
            ? StoreOutput(store: "counter", status: .failed, message: "overflows")
            : StoreOutput(store: "counter", status: .ok)
        return ReplayEntry(
            epoch: 1, sequence: sequence, actionType: "counter.add", payload: action(sequence).payload, plan: plan,
            outputs: [output])
    }

    /// Logs `range` as one batch, commits it, completes it, commits again.
    static func dispatch(_ range: ClosedRange<UInt64>, to log: ActionLog, failing: Set<UInt64> = []) throws {
        for sequence in range {
            log.append(sequence: sequence, epoch: 1, action: action(sequence), origin: "test", requestID: "b\(range.lowerBound)",
                       batch: (range.lowerBound, range.count), fingerprint: 1)
        }
        try log.flush()
        for sequence in range { log.complete(entry(sequence, failing: failing)) }
        try log.flush()
    }

    static func rows(_ log: ActionLog) throws -> [[UInt64]] {
        try log.applyJournal()
        return try log.database.read { db in
            try Row.fetchAll(db, sql: "SELECT sequence, last FROM outcome ORDER BY sequence").map { [$0["sequence"], $0["last"]] }
        }
    }

    /// Reads `range` both ways FETCH does, and checks they agree.
    static func served(_ log: ActionLog, _ range: ClosedRange<UInt64>) throws -> [ReplayEntry] {
        let entries = try log.entries(in: range, maximum: .max)
        #expect(try log.encodedEntries(in: range, maximum: .max) == EncodedEntries(entries), "the spliced bytes are the entries'")
        return entries
    }

    @Test func aBatchsAlikeCompletionsAreOneRowAndReadBackOneByOne() throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let failing: Set<UInt64> = [500]
        do {
            let log = try ActionLog(directory: directory.path, sync: .off)
            _ = try log.recover()
            try Self.dispatch(1...1_000, to: log, failing: failing)
            #expect(try Self.rows(log) == [[1, 499], [500, 500], [501, 1_000]], "the failure breaks the run in three")
            #expect(try Self.served(log, 1...1_000) == (1...1_000).map { Self.entry($0, failing: failing) })
            #expect(try Self.served(log, 250...260) == (250...260).map { Self.entry($0) }, "a range from inside a run")
            #expect(try Self.served(log, 498...502).map(\.outputs.first?.status) == [.ok, .ok, .failed, .ok, .ok])
            #expect(try log.entries(in: 990...2_000, maximum: 4).map(\.sequence) == [990, 991, 992, 993], "at most `maximum`")
        }
        let reopened = try ActionLog(directory: directory.path, sync: .off)
        let recovered = try reopened.recover()
        #expect(recovered.lastCompleted == 1_000 && recovered.pending.isEmpty)
        #expect(try Self.served(reopened, 1...1_000) == (1...1_000).map { Self.entry($0, failing: failing) })
    }

    /// Completions in separate commits are separate rows; a completion unlike the one before (another epoch, another
    /// plan) starts a row of its own even within one commit.
    @Test func onlyAlikeCompletionsOfOneCommitShareARow() throws {
        let log = try ActionLog(directory: nil, sync: .off)
        _ = try log.recover()
        for sequence in UInt64(1)...6 {
            log.append(sequence: sequence, epoch: 1, action: Self.action(sequence), origin: "test", requestID: "", batch: nil, fingerprint: 0)
        }
        try log.flush()
        log.complete(Self.entry(1))
        try log.flush()
        log.complete(Self.entry(2))
        log.complete(Self.entry(3))
        var otherEpoch = Self.entry(4)
        otherEpoch.epoch = 2
        log.complete(otherEpoch)
        var otherPlan = Self.entry(5)
        otherPlan.plan = [PlanStep(store: "counter"), PlanStep(store: "kv")]
        log.complete(otherPlan)
        log.complete(Self.entry(6))
        try log.flush()
        #expect(try Self.rows(log) == [[1, 1], [2, 3], [4, 4], [5, 5], [6, 6]])
        #expect(try Self.served(log, 1...6) == [Self.entry(1), Self.entry(2), Self.entry(3), otherEpoch, otherPlan, Self.entry(6)])
    }

    /// Text that `==` calls equal but whose bytes differ (a precomposed and a combining "é") is not alike: a row keeps
    /// its first entry's bytes for all, and the action statement keeps its last row's bound text for the next. Every
    /// entry reads back with its own bytes, which its chain value checks.
    @Test func canonicallyEquivalentTextKeepsItsOwnBytes() throws {
        let log = try ActionLog(directory: nil, sync: .off)
        _ = try log.recover()
        let spellings = ["caf\u{E9}", "cafe\u{301}", "caf\u{E9}"]
        #expect(spellings[0] == spellings[1], "Swift's == takes them for one")
        let actions = spellings.map { BatchAction(actionType: $0, payload: [1], error: $0) }
        for (offset, action) in actions.enumerated() {
            log.append(sequence: UInt64(offset + 1), epoch: 1, action: action, origin: spellings[offset], requestID: "", batch: nil,
                       fingerprint: 0)
        }
        try log.flush()
        let entries = actions.enumerated().map { offset, action in
            ReplayEntry(epoch: 1, sequence: UInt64(offset + 1), actionType: action.actionType, payload: action.payload,
                        error: action.error, plan: Self.plan, outputs: [StoreOutput(store: "counter", status: .failed, message: action.actionType)])
        }
        for entry in entries { log.complete(entry) }
        try log.flush()
        #expect(try Self.rows(log) == [[1, 1], [2, 2], [3, 3]])
        let served = try Self.served(log, 1...3)
        #expect(served.map { Array($0.actionType.utf8) } == spellings.map { Array($0.utf8) })
        #expect(served.map { Array(($0.error ?? "").utf8) } == spellings.map { Array($0.utf8) })
        #expect(served.map { Array($0.outputs[0].message.utf8) } == spellings.map { Array($0.utf8) })
        for column in ["actionType", "origin"] {
            let stored = try log.database.read { db in try String.fetchAll(db, sql: "SELECT \(column) FROM action ORDER BY sequence") }
            #expect(stored.map { Array($0.utf8) } == spellings.map { Array($0.utf8) }, "\(column)")
        }
    }

    /// Compaction through the middle of a run keeps the rest of it, which then starts after the compacted sequence.
    @Test func compactionInsideARunKeepsTheRestOfIt() throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        do {
            let log = try ActionLog(directory: directory.path, sync: .off)
            _ = try log.recover()
            try Self.dispatch(1...100, to: log)
            try Self.dispatch(101...200, to: log)
            log.compact(through: 150, keepRequests: 10)
            try log.flush()
            #expect(try Self.rows(log) == [[151, 200]])
            #expect(try Self.served(log, 1...200) == (151...200).map { Self.entry($0) })
            try Self.dispatch(201...210, to: log)
        }
        let reopened = try ActionLog(directory: directory.path, sync: .off)
        let recovered = try reopened.recover()
        #expect(recovered.lastCompleted == 210 && recovered.pending.isEmpty)
        #expect(try Self.served(reopened, 140...205) == (151...205).map { Self.entry($0) })
    }

    /// Two rows that claim the same sequence are a log changed on disk: the coordinator refuses to start on it rather
    /// than serve one of them.
    @Test func rowsThatOverlapAreRefusedAtOpening() throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        do {
            let log = try ActionLog(directory: directory.path, sync: .off)
            _ = try log.recover()
            try Self.dispatch(1...10, to: log, failing: [5])
            try log.database.write { db in try db.execute(sql: "UPDATE outcome SET last = 6 WHERE sequence = 1") }
        }
        #expect {
            _ = try ActionLog(directory: directory.path, sync: .off).recover()
        } throws: { error in
            "\(error)".contains("completed dispatches 1…10 have gaps or overlaps") && "\(error)".contains("Restore the file from a backup")
        }
    }

    /// A log written before v11 has one row per completion: opened by this version, each is a run of one.
    @Test func aLogFromBeforeRunsServesItsEntries() throws {
        let directory = Self.directory()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        do {
            let queue = try DatabaseQueue(path: directory.appendingPathComponent(ActionLog.fileName).path)
            try LogSchema.migrator.migrate(queue, upTo: "v10")
            try queue.write { db in
                try db.execute(sql: "INSERT INTO epoch (epoch, startedAt) VALUES (1, 0)")
                var chain: UInt64 = 0
                for sequence in UInt64(1)...3 {
                    chain = LogChain.next(after: chain, sequence: sequence, action: Self.action(sequence))
                    try db.execute(sql: """
                        INSERT INTO action (sequence, epoch, actionType, payload, origin, batchSize, loggedAt, chain)
                        VALUES (?, 1, 'counter.add', ?, 'test', 0, 0, ?)
                        """, arguments: [sequence, Data(Self.action(sequence).payload), Int64(bitPattern: chain)])
                    var entry = Self.entry(sequence)
                    entry.payload = []
                    try db.execute(sql: "INSERT INTO outcome (sequence, entry, completedAt) VALUES (?, ?, 0)",
                                   arguments: [sequence, Data(Self.codec.encodeEntry(entry))])
                }
            }
        }
        let log = try ActionLog(directory: directory.path, sync: .off)
        let recovered = try log.recover()
        #expect(recovered.lastCompleted == 3 && recovered.pending.isEmpty)
        #expect(try Self.rows(log) == [[1, 1], [2, 2], [3, 3]])
        #expect(try Self.served(log, 1...3) == (1...3).map { Self.entry($0) })
        // New completions alike are one row beside the old ones.
        try Self.dispatch(4...9, to: log)
        #expect(try Self.rows(log) == [[1, 1], [2, 2], [3, 3], [4, 9]])
        #expect(try Self.served(log, 1...9) == (1...9).map { Self.entry($0) })
    }

    /// A million actions in batches of 10,000, the largest `--max-batch`: a hundred outcome rows, and every entry
    /// served as it was completed, the first and the last of each run checked.
    @Test(.timeLimit(.minutes(5))) func aMillionCompletionsAreAHundredRows() throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        do {
            let log = try ActionLog(directory: directory.path, sync: .off)
            _ = try log.recover()
            for batch in UInt64(0)..<100 { try Self.dispatch(batch * 10_000 + 1...(batch + 1) * 10_000, to: log) }
            let rows = try Self.rows(log)
            #expect(rows.count == 100)
            #expect(rows.first == [1, 10_000] && rows.last == [990_001, 1_000_000])
            for row in rows.prefix(3) + rows.suffix(2) {
                #expect(try Self.served(log, max(1, row[0] - 1)...row[0] + 1).map(\.sequence) == Array(max(1, row[0] - 1)...row[0] + 1))
            }
            #expect(try log.entries(in: 1...1_000_000, maximum: 10_000).count == 10_000)
            #expect(try Self.served(log, 999_990...1_000_000) == (999_990...1_000_000).map { Self.entry($0) })
        }
        let reopened = try ActionLog(directory: directory.path, sync: .off)
        #expect(try reopened.recover().lastCompleted == 1_000_000)
    }
}
