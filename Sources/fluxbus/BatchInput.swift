import Foundation
import FluxBus
import FluxBusProtocol

/// The input of `dispatch --batch`, checked whole before the first batch is sent: every line JSON and within the
/// payload limit, every batch within the message limit. Bad input is refused with every line at fault named, and
/// nothing is sent.
struct BatchInput {
    /// One action: its payload and the line of standard input it came from (counting from 1, blank lines too).
    struct Line {
        let number: Int
        let payload: [UInt8]
    }

    let lines: [Line]
    let batchSize: Int

    /// The batches, as ranges of ``lines``.
    var batches: [Range<Int>] {
        stride(from: 0, to: lines.count, by: batchSize).map { $0..<min($0 + batchSize, lines.count) }
    }

    /// How many offending lines an error lists before it says "and N more".
    static let listed = 10

    /// Reads and checks `input`: one JSON payload per line, blank lines skipped.
    ///
    /// Lines are cut at LF bytes, and a line's CR before its LF is dropped with it. A line is blank when it holds only
    /// spaces, tabs and CRs, the whitespace JSON itself allows. The bytes are read as they are, not decoded into a
    /// `String` first: that would have replaced invalid UTF-8 with U+FFFD and sent what the input did not say, where
    /// the JSON check now refuses the line.
    /// - Parameters:
    ///   - maxPayloadBytes: the largest payload accepted, the coordinator's `--max-payload-bytes`.
    ///   - makeMessage: the DISPATCH_BATCH batch `index` would be sent as, to measure against the message limit.
    /// - Throws: ``BusError`` `usage`, naming every line (up to ``listed``) that is not JSON or is too large, or the
    ///   first batch that is over the message limit.
    init(
        _ input: [UInt8], batchSize: Int, maxPayloadBytes: Int, makeMessage: (_ index: Int, [BatchAction]) -> Message,
        action: ([UInt8]) -> BatchAction
    ) throws(BusError) {
        var lines: [Line] = []
        var problems: [String] = []
        let limit = min(maxPayloadBytes, Limits.default.maxBytesField)
        for (index, line) in input.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).enumerated()
        where !line.allSatisfy(Self.isBlank) {
            let number = index + 1
            let payload = line.last == UInt8(ascii: "\r") ? line.dropLast() : line
            if payload.count > limit {
                problems.append("line \(number) is \(payload.count) bytes, over the limit of \(limit) bytes for one payload")
                continue
            }
            do {
                lines.append(Line(number: number, payload: try PayloadSource.validated(Array(payload), origin: "line \(number) of standard input")))
            } catch {
                problems.append(error.message)
            }
        }
        guard problems.isEmpty else {
            let more = problems.count > Self.listed ? "\n  … and \(problems.count - Self.listed) more" : ""
            throw BusError(code: .usage, message: """
                nothing was sent: \(problems.count) line\(problems.count == 1 ? "" : "s") of standard input cannot be dispatched
                  \(problems.prefix(Self.listed).joined(separator: "\n  "))\(more)
                Fix or remove \(problems.count == 1 ? "that line" : "those lines") and run it again. The payload limit is the \
                coordinator's --max-payload-bytes (1 MiB by default); if the coordinator runs with another, pass the same \
                --max-payload-bytes here (at most 8 MiB, FluxBus's own limit).
                """)
        }
        self.lines = lines
        self.batchSize = batchSize
        for (index, batch) in batches.enumerated() {
            let message = makeMessage(index, lines[batch].map { action($0.payload) })
            do {
                try RequestLimits.check(message)
            } catch {
                throw BusError(code: .usage, message: "nothing was sent: the batch of \(describe(batch)) is too large: "
                    + error.message + "; lower --batch-size (now \(batchSize))")
            }
        }
    }

    /// Whether a byte is whitespace to JSON (the LF that ends a line is cut off before).
    static func isBlank(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\r")
    }

    /// The input lines of some actions, for example `lines 1-1000` or `line 7`.
    func describe(_ range: Range<Int>) -> String {
        guard let first = lines[range].first?.number, let last = lines[range].last?.number else { return "no lines" }
        return first == last ? "line \(first)" : "lines \(first)-\(last)"
    }

    /// The first and last input line numbers of some actions.
    func numbers(_ range: Range<Int>) -> [Int] {
        guard let first = lines[range].first?.number, let last = lines[range].last?.number else { return [] }
        return [first, last]
    }
}
