/// The answers SQLite writes with their request's row rather than on their own. A lock-step dispatch's request row and
/// its answer are journaled a commit apart and usually applied in the same transaction: one insert with the answer
/// costs SQLite less than an insert and then an upsert of the same row (``LogStatements/upsertAnswerSQL``).
///
/// The tables end as they would without it: an answer folds only into a row for the same request id and sequence that
/// the transaction inserts before it, and nothing folds in a transaction that compacts, whose deletes could fall
/// between the two.
struct FoldedAnswers {
    /// The last foldable answer's body at each request row's sequence, with its request id.
    private var answers: [UInt64: (requestID: String, body: [UInt8])] = [:]

    init(_ records: [JournalRecord]) {
        let compacts = records.contains { record in
            record.writes.contains { if case .compaction = $0 { true } else { false } }
        }
        guard !compacts else { return }
        var rows: [UInt64: String] = [:]
        for record in records {
            for (write, blob) in record.writesWithBlobs {
                if let (requestID, first) = write.requestRow {
                    rows[first] = requestID
                } else if case .answer(let requestID, let sequence, _) = write, let blob, rows[sequence] == requestID {
                    answers[sequence] = (requestID, blob)
                }
            }
        }
    }

    /// The answer body the request row of `requestID` at `sequence` is written with, if one folds into it.
    func answer(forRowOf requestID: String, at sequence: UInt64) -> [UInt8]? {
        guard let answer = answers[sequence], answer.requestID == requestID else { return nil }
        return answer.body
    }

    /// Whether `write` is an answer that its request's row holds already.
    func isFolded(_ write: LogWrite) -> Bool {
        guard case .answer(let requestID, let sequence, _) = write else { return false }
        return answers[sequence]?.requestID == requestID
    }
}
