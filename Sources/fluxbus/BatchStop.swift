import Foundation
import FluxBus
import FluxBusProtocol

/// What `dispatch --batch` prints when a batch fails part-way: which input lines were applied, under which
/// sequences; what became of the batch that failed; and which lines were never sent.
struct BatchStop {
    let input: BatchInput
    /// The batches answered, in order, from the first.
    let results: [Message.BatchResult]
    /// The request id the failed batch was sent under.
    let requestID: String
    let error: BusError
    /// Whether --request-id was given, which makes a rerun of the same input safe.
    let idempotent: Bool

    /// A refusal is an ERROR the coordinator sent before accepting the batch, or a handshake refused before the batch
    /// ever had a connection (`BusClient` reports one refused after a connection was up as `unreachable`): nothing of
    /// it was applied. Anything else (no answer in time, a coordinator that stopped) leaves its outcome unknown.
    var failedWasApplied: Bool? { error.code == .refused ? false : nil }

    private var batches: [Range<Int>] { input.batches }
    private var failedIndex: Int { results.count }

    var text: String {
        var lines = ["stopped at batch \(failedIndex + 1) of \(batches.count): \(error.message)"]
        let applied = batches.prefix(results.count)
        if let first = applied.first, let last = applied.last {
            lines.append("applied: \(input.describe(first.lowerBound..<last.upperBound)) (\(last.upperBound) actions) as "
                + "#\(results.first!.firstSequence) to #\(results.last!.lastSequence)")
            for (batch, result) in zip(applied, results) {
                lines.append("  \(input.describe(batch)): #\(result.firstSequence) to #\(result.lastSequence)")
            }
        } else {
            lines.append("applied: nothing")
        }
        let failed = input.describe(batches[failedIndex])
        if failedWasApplied == false {
            lines.append("not applied: \(failed) (refused whole)")
        } else {
            lines.append("unknown: \(failed) may or may not have been applied (request id \(requestID)); "
                + (idempotent
                    ? "run the same input again with the same --request-id and --batch-size to learn the outcome without applying anything twice"
                    : "without --request-id, sending these lines again may apply them twice"))
        }
        if failedIndex + 1 < batches.count {
            lines.append("not sent: \(input.describe(batches[failedIndex + 1].lowerBound..<input.lines.count))")
        } else {
            lines.append("not sent: nothing")
        }
        return lines.joined(separator: "\n")
    }

    /// One object after the per-batch lines of `--json`.
    struct JSON: Codable {
        struct Failed: Codable {
            let batch: Int
            let lines: [Int]
            let requestId: String
            let outcome: String
            let error: String
        }
        let appliedLines: [Int]
        let failed: Failed
        let notSentLines: [Int]
    }

    var json: JSON {
        let appliedCount = batches.prefix(results.count).last?.upperBound ?? 0
        let notSent = failedIndex + 1 < batches.count ? batches[failedIndex + 1].lowerBound..<input.lines.count : 0..<0
        return JSON(
            appliedLines: input.numbers(0..<appliedCount),
            failed: .init(
                batch: failedIndex + 1, lines: input.numbers(batches[failedIndex]), requestId: requestID,
                outcome: failedWasApplied == false ? "not applied" : "unknown", error: error.message),
            notSentLines: input.numbers(notSent))
    }
}
