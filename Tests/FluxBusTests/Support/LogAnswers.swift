import FluxBusProtocol

@testable import FluxBus

/// Everything the engine can ask a log, as lines of text: two logs answer alike when their lines are equal, and a
/// difference names the question.
enum LogAnswers {
    static func of(_ log: any LogStorage, through last: UInt64) -> [String] {
        var lines = [
            "unflushed \(log.hasUnflushedActions)", "oldest \(log.oldestRetained)", "stores \(log.knownStores)",
            "histories \(log.histories.sorted { $0.key < $1.key })", "poison \(log.poisonMarks)",
            "declarations \(log.declarations.sorted { $0.key < $1.key })",
            "snapshots \(log.snapshots.values.sorted { $0.store < $1.store })",
        ]
        for sequence in 0...last + 1 {
            lines.append("entry \(sequence): \(describe { try log.loggedEntry(at: sequence) })")
            lines.append("entries from \(sequence): \(describe { try log.entries(in: sequence...last + 1, maximum: 3) })")
        }
        lines.append("all entries: \(describe { try log.entries(in: 0...last + 1, maximum: .max) })")
        lines.append("no entries: \(describe { try log.entries(in: 0...last + 1, maximum: 0) })")
        for requestID in LogScript.requestIDs + ["", "fresh"] {
            lines.append("request \(requestID): " + describe {
                try log.request(requestID).map { "\($0.answer.map { "\($0)" } ?? "unanswered") \($0.fingerprint as Any) \($0.actionType as Any)" }
            })
        }
        for store in LogScript.stores {
            let snapshot = log.snapshots[store]
            let size = snapshot?.size ?? 0
            for sequence in Set([snapshot?.sequence ?? 0, 1]).sorted() {
                for (offset, count) in [(0, 1_000), (1, 7), (size / 2, 33), (size &- 1, 5), (size, 4), (0, 0)] {
                    lines.append("bytes \(store)@\(sequence) \(offset)+\(count): " + describe {
                        try log.snapshotBytes(store: store, sequence: sequence, offset: offset, count: count)
                    })
                }
            }
        }
        return lines
    }

    private static func describe<T>(_ body: () throws -> T) -> String {
        do { return "\(try body())" } catch { return "throws \(error)" }
    }
}
