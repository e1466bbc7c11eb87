import Foundation
import FluxBusProtocol
import GRDB
import Testing

@testable import FluxBus

/// An answer that SQLite applies in the same transaction as its request's row is written with that row
/// (``FoldedAnswers``), and the tables end as the row and the upsert would have left them.
@Suite("Answers written with their request's row")
struct FoldedAnswersTests {
    static let action = BatchAction(actionType: "counter.add", payload: Array(#"{"by":1}"#.utf8))

    static func result(_ requestID: String, _ sequence: UInt64) -> Message {
        .result(.init(requestID: requestID, epoch: 1, sequence: sequence, elapsedMicros: 9, outcomes: []))
    }

    static func actionWrite(_ sequence: UInt64, _ requestID: String) -> LogWrite {
        .action(sequence: sequence, epoch: 1, action: action, origin: "c", requestID: requestID, batch: nil, chain: 0,
                fingerprint: sequence)
    }

    static func record(_ writes: [LogWrite]) -> JournalRecord {
        JournalRecord(encoding: writes, at: 0, codec: Codec())
    }

    @Test func anAnswerFoldsIntoItsRequestsRowInTheSameTransaction() {
        let answer = LogWrite.answer(requestID: "r1", sequence: 1, message: Self.result("r1", 1))
        let folded = FoldedAnswers([Self.record([Self.actionWrite(1, "r1")]), Self.record([answer])])
        #expect(folded.isFolded(answer))
        #expect(folded.answer(forRowOf: "r1", at: 1) == Codec().encodeBody(Self.result("r1", 1)))
        #expect(folded.answer(forRowOf: "r2", at: 1) == nil, "another request's row at that sequence takes nothing")
    }

    @Test func whatCouldEndOtherwiseDoesNotFold() {
        let answer = LogWrite.answer(requestID: "r1", sequence: 1, message: Self.result("r1", 1))
        #expect(!FoldedAnswers([Self.record([answer])]).isFolded(answer), "its row is in an earlier transaction")
        #expect(!FoldedAnswers([Self.record([answer, Self.actionWrite(1, "r1")])]).isFolded(answer), "it comes before its row")
        #expect(!FoldedAnswers([Self.record([Self.actionWrite(1, "r2"), answer])]).isFolded(answer), "the row is another request's")
        let compacting = Self.record([Self.actionWrite(1, "r1"), answer, .compaction(through: 1, keepRequests: 0)])
        #expect(!FoldedAnswers([compacting]).isFolded(answer), "a compaction's deletes could fall between the two")
        #expect(FoldedAnswers([compacting]).answer(forRowOf: "r1", at: 1) == nil)
    }

    /// Lock-step dispatches journaled one commit each and applied in one transaction: every completed request's row
    /// holds its answer, fingerprint and action type, and a lookup and a restart read them back.
    @Test func theTablesHoldEveryAnswerWithItsRow() throws {
        let directory = LogJournalTests.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        do {
            let log = try ActionLog(directory: directory.path, sync: .off)
            _ = try log.recover()
            log.beginEpoch(1)
            _ = try log.flushDeferringSync()
            for sequence in UInt64(1)...6 {
                LogJournalTests.dispatch(sequence, to: log)
                _ = try log.flushDeferringSync()
            }
            #expect(log.journaledRecords == 6, "the request rows and the answers wait for one transaction")
            try log.applyJournal()
        }
        let rows = try DatabaseQueue(path: directory.appendingPathComponent(ActionLog.fileName).path).read { db in
            try Row.fetchAll(db, sql: "SELECT sequence, requestID, fingerprint, actionType, result FROM request ORDER BY sequence")
        }
        #expect(rows.map { $0["sequence"] as UInt64 } == Array(1...6))
        for row in rows {
            let sequence: UInt64 = row["sequence"]
            #expect(row["requestID"] as String == "r\(sequence)")
            #expect(row["fingerprint"] as UInt64? == sequence)
            #expect(row["actionType"] as String? == Self.action.actionType)
            let expected = sequence < 6 ? Data(Codec().encodeBody(Self.result("r\(sequence)", sequence))) : nil
            #expect(row["result"] as Data? == expected, "request \(sequence)")
        }
        let reopened = try ActionLog(directory: directory.path, sync: .off)
        _ = try reopened.recover()
        let logged = try reopened.request("r3")
        #expect(logged?.answer == Self.result("r3", 3))
        #expect(logged?.fingerprint == 3)
    }
}
