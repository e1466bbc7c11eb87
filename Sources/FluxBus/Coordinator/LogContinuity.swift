import FluxBusProtocol

/// What a data directory says its log must hold: the bus it belongs to, and the last sequence committed with the
/// log's chain value there. Kept beside the log (``LogMark``), so that a log that lost its tail, or was emptied or
/// replaced, is noticed at start instead of starting as a shorter bus.
struct LogHighWater: Equatable {
    var busID: String
    var sequence: UInt64
    var chain: UInt64
}

/// The rule that keeps a damaged log from starting as a bus: pure, so the simulated log applies it too.
enum LogContinuity {
    /// What the log itself holds, for the comparison.
    struct Holding {
        var busID: String?
        var lastSequence: UInt64
        var oldestRetained: UInt64
        /// The log's chain value at the mark's sequence, if it still holds that entry.
        var chainAtMark: UInt64?
    }

    /// Why the log cannot be the bus the mark describes, or nil when it holds at least what the mark says.
    static func refusal(mark: LogHighWater, log: Holding) -> String? {
        guard let busID = log.busID else {
            return "the data directory held bus \(mark.busID) through #\(mark.sequence), but its log is missing or empty"
        }
        guard busID == mark.busID || busID.isEmpty else {
            return "the log belongs to bus \(busID), but this data directory held bus \(mark.busID)"
        }
        guard log.lastSequence >= mark.sequence else {
            return "the log ends at #\(log.lastSequence), but it had committed through #\(mark.sequence): "
                + "\(mark.sequence - log.lastSequence) logged actions are gone (a lost or truncated log.sqlite-wal or log.journal?)"
        }
        if mark.sequence >= log.oldestRetained, mark.sequence > 0, let chain = log.chainAtMark, chain != mark.chain {
            return "the log's entries through #\(mark.sequence) are not the ones it had committed (chain "
                + "\(StateDigest.hex(chain)) where it recorded \(StateDigest.hex(mark.chain)))"
        }
        return nil
    }

    /// What an operator does about a refusal.
    static let recovery = "The coordinator will not run a bus that silently lost acknowledged actions. Restore "
        + "log.sqlite (with its log.sqlite-wal, if the copy has one) from a backup, or recover the missing file; or, to go "
        + "on from what the log holds on purpose, start once with --new-bus: workers that applied more are then refused "
        + "(REJECT 9) and must be restarted empty. See docs/OPERATIONS.md, section 11 (Recovery)"
}
