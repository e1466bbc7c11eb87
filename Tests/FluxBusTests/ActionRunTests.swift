import Foundation
import FluxBusProtocol
import GRDB
import Testing

@testable import FluxBus

/// Schema v12: a batch's actions are rows of `action_run`, each holding consecutive actions of one batch, rather than
/// a row of `action` each (docs/BENCHMARKS.md, "A batch's actions in one row"). Whatever the rows, the log reads back
/// every action as it was logged: its chain value and epoch, its entry once completed, the actions a restart
/// dispatches again; compaction inside a run keeps the rest of it; and a row that does not hold what it says is
/// damage, refused.
@Suite("A batch's actions in rows of runs")
struct ActionRunTests {
    static func directory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("fluxbus-actionruns-\(UUID().uuidString.prefix(8))")
    }

    static func action(_ sequence: UInt64) -> BatchAction {
        BatchAction(actionType: sequence % 3 == 0 ? "kv.set" : "counter.add", payload: Array(#"{"by":\#(sequence)}"#.utf8),
                    error: sequence % 7 == 0 ? "refused upstream: \(sequence)" : nil)
    }

    static func entry(_ sequence: UInt64) -> ReplayEntry {
        let action = action(sequence)
        return ReplayEntry(epoch: 1, sequence: sequence, actionType: action.actionType, payload: action.payload, error: action.error,
                           plan: [PlanStep(store: "counter")], outputs: [StoreOutput(store: "counter", status: .ok)])
    }

    /// Logs `range` as one batch of request `id`, commits it, and completes `completing` of it.
    static func logBatch(_ range: ClosedRange<UInt64>, id: String, completing: ClosedRange<UInt64>? = nil, to log: ActionLog) throws {
        for sequence in range {
            log.append(sequence: sequence, epoch: 1, action: action(sequence), origin: "client-1", requestID: id,
                       batch: (range.lowerBound, range.count), fingerprint: 42)
        }
        try log.flush()
        for sequence in completing ?? range { log.complete(entry(sequence)) }
        try log.flush()
    }

    static func runs(_ log: ActionLog) throws -> [[UInt64]] {
        try log.applyJournal()
        return try log.database.read { db in
            try Row.fetchAll(db, sql: "SELECT first, last FROM action_run ORDER BY first").map { [$0["first"], $0["last"]] }
        }
    }

    static func chains(through last: UInt64) -> [UInt64] {
        var chain: UInt64 = 0
        return (1...last).map { sequence in
            chain = LogChain.next(after: chain, sequence: sequence, action: action(sequence))
            return chain
        }
    }

    @Test func aBatchIsOneRowAndReadsBackActionByAction() throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        do {
            let log = try ActionLog(directory: directory.path, sync: .off)
            _ = try log.recover()
            try Self.logBatch(1...1_000, id: "b1", to: log)
            // A DISPATCH between batches keeps its row of `action`.
            log.append(sequence: 1_001, epoch: 1, action: Self.action(1_001), origin: "client-1", requestID: "d1", batch: nil, fingerprint: 9)
            try log.flush()
            log.complete(Self.entry(1_001))
            try Self.logBatch(1_002...1_500, id: "b2", completing: 1_002...1_200, to: log)
            #expect(try Self.runs(log) == [[1, 1_000], [1_002, 1_500]])
            #expect(try log.database.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM action") } == 1)
            let chains = Self.chains(through: 1_500)
            for sequence in [1, 2, 999, 1_000, 1_001, 1_002, 1_500] as [UInt64] {
                #expect(try log.loggedEntry(at: sequence) == LoggedEntry(chain: chains[Int(sequence) - 1], epoch: 1), "#\(sequence)")
            }
            #expect(try log.loggedEntry(at: 1_501) == nil)
            let served = try log.entries(in: 990...1_010, maximum: .max)
            #expect(served == (990...1_010).map(Self.entry))
            #expect(try log.encodedEntries(in: 990...1_010, maximum: .max) == EncodedEntries(served))
            #expect(try log.entries(in: 1_195...1_300, maximum: .max).map(\.sequence) == Array(1_195...1_200), "completed only")
            #expect(try log.request("b2")?.fingerprint == 42)
        }
        // A restart dispatches the rest of b2 again, as one request, under its fingerprint.
        let reopened = try ActionLog(directory: directory.path, sync: .off)
        let recovered = try reopened.recover()
        #expect(recovered.lastSequence == 1_500 && recovered.lastCompleted == 1_200)
        #expect(recovered.pending.count == 1)
        #expect(recovered.pending.first.map { [$0.sequence, $0.batchFirst ?? 0, UInt64($0.batchSize)] } == [1_201, 1_002, 499])
        #expect(recovered.pending.first?.actions == (1_201...1_500).map(Self.action))
        #expect(recovered.pending.first?.requestID == "b2" && recovered.pending.first?.fingerprint == 42)
        #expect(try reopened.loggedEntry(at: 1_500)?.chain == Self.chains(through: 1_500).last)
    }

    /// A batch's actions logged in separate commits, or among other writes, are separate runs; the largest batch,
    /// 10,000 actions, one.
    @Test func runsFollowCommitsAndTheLargestBatchIsOne() throws {
        let log = try ActionLog(directory: nil, sync: .off)
        _ = try log.recover()
        for sequence in UInt64(1)...10_000 {
            log.append(sequence: sequence, epoch: 1, action: Self.action(sequence), origin: "c", requestID: "big", batch: (1, 10_000),
                       fingerprint: 1)
        }
        try log.flush()
        log.append(sequence: 10_001, epoch: 1, action: Self.action(10_001), origin: "c", requestID: "split", batch: (10_001, 3), fingerprint: 2)
        try log.flush()
        log.append(sequence: 10_002, epoch: 1, action: Self.action(10_002), origin: "c", requestID: "split", batch: (10_001, 3), fingerprint: 2)
        log.recordDecision(StoreOutput(store: "counter", status: .ok), sequence: 10_002)
        log.append(sequence: 10_003, epoch: 1, action: Self.action(10_003), origin: "c", requestID: "split", batch: (10_001, 3), fingerprint: 2)
        try log.flush()
        #expect(try Self.runs(log) == [[1, 10_000], [10_001, 10_001], [10_002, 10_002], [10_003, 10_003]])
        let recovered = try log.database.read { db in try UInt64.fetchOne(db, sql: "SELECT MAX(last) FROM action_run") }
        #expect(recovered == 10_003)
        #expect(try log.loggedEntry(at: 7_777)?.chain == Self.chains(through: 7_777).last)
    }

    /// Compaction through the middle of a run keeps the rest of it, trimmed: nothing at or before the compacted
    /// sequence stays in either table.
    @Test func compactionInsideARunTrimsIt() throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        do {
            let log = try ActionLog(directory: directory.path, sync: .off)
            _ = try log.recover()
            try Self.logBatch(1...100, id: "b1", to: log)
            try Self.logBatch(101...200, id: "b2", to: log)
            log.compact(through: 150, keepRequests: 10)
            try log.flush()
            #expect(try Self.runs(log) == [[151, 200]])
            #expect(try log.loggedEntry(at: 150) == nil)
            #expect(try log.loggedEntry(at: 151)?.chain == Self.chains(through: 151).last)
            #expect(try log.entries(in: 1...200, maximum: .max) == (151...200).map(Self.entry))
        }
        let reopened = try ActionLog(directory: directory.path, sync: .off)
        let recovered = try reopened.recover()
        #expect(recovered.lastCompleted == 200 && recovered.pending.isEmpty && reopened.oldestRetained == 151)
        #expect(try reopened.entries(in: 140...160, maximum: .max).map(\.sequence) == Array(151...160))
    }

    /// A run row that does not hold the actions its first and last say, cut short, or overlapping a row of `action`,
    /// stops the coordinator at opening or a read rather than serve or dispatch what it holds.
    @Test(arguments: ["one action fewer", "cut short", "ends before it starts"])
    func aDamagedRunIsRefused(_ damage: String) throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        do {
            let log = try ActionLog(directory: directory.path, sync: .off)
            _ = try log.recover()
            try Self.logBatch(1...10, id: "b1", completing: 1...5, to: log)
            let sql = switch damage {
            case "one action fewer": "UPDATE action_run SET last = 9"
            case "cut short": "UPDATE action_run SET actions = substr(actions, 1, length(actions) - 3)"
            default: "UPDATE action_run SET last = 0"
            }
            try log.database.write { db in try db.execute(sql: sql) }
        }
        #expect(throws: (any Error).self) {
            let log = try ActionLog(directory: directory.path, sync: .off)
            _ = try log.recover()
            _ = try log.entries(in: 1...10, maximum: .max)
        }
    }
}
