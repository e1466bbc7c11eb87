import Foundation
import FluxBusProtocol
import GRDB
import Testing

@testable import FluxBus

/// Schema v8 keys the `request` table by each request's first sequence, so that a commit appends there instead of
/// writing into a tree of random request ids (docs/BENCHMARKS.md, "The request table keyed by sequence"). A log written
/// before must keep every request: a retry of one it answered still gets that answer, and one it did not finish still
/// has its fingerprint, so that a reuse of its id for other actions is refused.
@Suite("The request table, from request ids to sequences")
struct RequestTableMigrationTests {
    static let codec = Codec()

    @Test func aLogFromBeforeKeepsEveryRequest() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fluxbus-v7-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let answer = Message.result(.init(requestID: "r1", epoch: 1, sequence: 1, elapsedMicros: 9, outcomes: []))
        let entry = ReplayEntry(
            epoch: 1, sequence: 1, actionType: "counter.add", payload: [], plan: [PlanStep(store: "counter")],
            outputs: [StoreOutput(store: "counter", status: .ok)])
        do {
            // A log as FluxBus wrote it up to schema v7: #1 answered for r1, and a batch r2 of #2 and #3 not completed.
            let queue = try DatabaseQueue(path: directory.appendingPathComponent(ActionLog.fileName).path)
            try LogSchema.migrator.migrate(queue, upTo: "v7")
            try queue.write { db in
                try db.execute(sql: "INSERT INTO epoch (epoch, startedAt) VALUES (1, 0)")
                for (sequence, requestID, batchFirst, batchSize) in [(1, "r1", nil, 0), (2, "r2", 2, 2), (3, "r2", 2, 2)] as [(Int, String, Int?, Int)] {
                    try db.execute(sql: """
                        INSERT INTO action (sequence, epoch, actionType, payload, origin, requestID, batchFirst, batchSize, loggedAt)
                        VALUES (?, 1, 'counter.add', x'7b7d', 'test', ?, ?, ?, 0)
                        """, arguments: [sequence, requestID, batchFirst, batchSize])
                }
                try db.execute(sql: "INSERT INTO outcome (sequence, entry, completedAt) VALUES (1, ?, 0)",
                               arguments: [Data(Self.codec.encodeEntry(entry))])
                try db.execute(sql: "INSERT INTO request (requestID, sequence, result, fingerprint, actionType) VALUES (?, 1, ?, 11, 'counter.add')",
                               arguments: ["r1", Data(Self.codec.encode(answer)[1])])
                try db.execute(sql: "INSERT INTO request (requestID, sequence, fingerprint, actionType) VALUES ('r2', 2, 22, 'counter.add')")
            }
        }
        let batchAnswer = Message.batchResult(.init(
            requestID: "r2", epoch: 2, firstSequence: 2, count: 2, elapsedMicros: 5, failures: [], outcomes: []))
        do {
            let log = try ActionLog(directory: directory.path, sync: .off)
            let recovered = try log.recover()
            let columns = try log.database.inDatabase { db in try db.primaryKey("request").columns }
            #expect(columns == ["sequence"], "keyed by sequence now")
            #expect(try log.request("r1")?.answer == answer, "an answered request still answers a retry")
            #expect(try log.request("r1")?.fingerprint == 11)
            #expect(try log.request("r2")?.fingerprint == 22)
            #expect(try log.request("r3") == nil)
            #expect(recovered.pending.map(\.requestID) == ["r2"] && recovered.pending.map(\.fingerprint) == [22],
                    "the unfinished batch is dispatched again under its fingerprint")
            // The batch completes after the restart: its answer lands on its row, and a reopened log finds it.
            log.recordAnswer(batchAnswer, for: "r2", sequence: 2)
            try log.flush()
        }
        let reopened = try ActionLog(directory: directory.path, sync: .off)
        _ = try reopened.recover()
        #expect(try reopened.request("r2")?.answer == batchAnswer)
        #expect(try reopened.request("r2")?.fingerprint == 22)
    }

    /// An answer recorded at a sequence whose row is another request's does not overwrite it: the upsert updates a row
    /// only under its own id (the engine never asks for this; the log must not turn it into a wrong answer).
    @Test func anAnswerNeverLandsOnAnotherRequestsRow() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fluxbus-v8-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: directory) }
        let log = try ActionLog(directory: directory.path, sync: .off)
        _ = try log.recover()
        log.append(sequence: 1, epoch: 1, action: BatchAction(actionType: "a", payload: []), origin: "test", requestID: "r1",
                   batch: nil, fingerprint: 1)
        log.recordAnswer(.result(.init(requestID: "r9", epoch: 1, sequence: 1, elapsedMicros: 1, outcomes: [])), for: "r9", sequence: 1)
        try log.flush()
        #expect(try log.request("r1")?.answer == nil, "r1's row keeps no answer of r9's")
        #expect(try log.request("r9") == nil, "r9 has no row of its own")
    }

    /// At the size a log keeps by default: 100,000 request ids remembered through compaction, each found by its
    /// sequence, after a reopen too, and none of those compaction dropped.
    @Test func aHundredThousandRememberedRequestsAreFoundByTheirSequence() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fluxbus-ids-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: directory) }
        let remembered = 100_000, total: UInt64 = 120_000
        let action = BatchAction(actionType: "counter.add", payload: Array(#"{"by":1}"#.utf8))
        // Ids as BusClient makes them: one UUID per process, and a counter.
        let id = { (sequence: UInt64) in "6F1A2B3C-1111-4222-8333-444455556666-\(sequence)" }
        do {
            let log = try ActionLog(directory: directory.path, sync: .off)
            _ = try log.recover()
            for sequence in 1...total {
                log.append(sequence: sequence, epoch: 1, action: action, origin: "test", requestID: id(sequence), batch: nil,
                           fingerprint: sequence)
                if sequence % 5_000 == 0 { try log.flush() }
            }
            log.compact(through: 1, keepRequests: remembered)
            try log.flush()
        }
        let log = try ActionLog(directory: directory.path, sync: .off)
        _ = try log.recover()
        let kept = total - UInt64(remembered) + 1
        for sequence in [kept, kept + 1, 77_777, total] {
            #expect(try log.request(id(sequence))?.fingerprint == sequence, "#\(sequence)")
        }
        for sequence in [1, 2, kept - 1] as [UInt64] { #expect(try log.request(id(sequence)) == nil, "#\(sequence) was compacted") }
        let rows = try log.database.inDatabase { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM request") }
        #expect(rows == remembered)
    }
}
