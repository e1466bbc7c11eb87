/// When the coordinator asks replicas for their stores' states so that it can compact its log, which answers it
/// still awaits, and how far the log may then be cut.
///
/// A round starts once the log holds a quarter more than it must retain, and once the log has grown by at least as
/// many bytes as the snapshots the last round took: a round reads and stores every store's whole state, so this keeps
/// compaction's cost within the log's own (a large state is snapshotted less often, never on every quarter). It asks
/// one live replica per known store, and ends when every answer came or its deadline passed: `--state-timeout` for
/// the first answers (a replica encodes its whole state before it answers), extended by `--ack-timeout` after each
/// chunk. The next round waits a second after that.
struct SnapshotRounds {
    /// What became of one store's request in the last round, for an operator told why the log cannot be compacted.
    enum Ask: Equatable {
        /// Asked, and no answer came before the round ended, or yet.
        case unanswered(worker: String)
        /// The replica answered (a state, which may still have been refused, or an ERROR).
        case answered(worker: String)
        /// The replica was lost or left before it answered.
        case lost(worker: String)
    }

    /// At least this many completed entries stay in the log.
    let retain: UInt64
    /// Query id → the store asked for, and the worker asked.
    private var awaiting: [String: (store: String, worker: String)] = [:]
    /// Store → what became of its request, in the round under way or the last one; a store absent had no live
    /// replica to ask.
    private(set) var asks: [String: Ask] = [:]
    private var roundEndsAt: MonotonicTime?
    private var nextRoundAt: MonotonicTime
    private var issued = 0
    /// Bytes logged since the last round began (payloads, and a row's overhead per entry).
    private var loggedBytes: UInt64 = 0

    /// What one log entry costs besides its payload, roughly: the bound counts entries of tiny payloads too.
    static let entryOverhead: UInt64 = 64

    init(retain: Int, now: MonotonicTime) {
        self.retain = UInt64(retain)
        nextRoundAt = now
    }

    var isUnderWay: Bool { roundEndsAt != nil }

    /// Counts an entry the log took.
    mutating func logged(payloadBytes: Int) {
        loggedBytes &+= UInt64(payloadBytes) + Self.entryOverhead
    }

    /// Whether a round should start: none under way or resting, the log past its retention by a quarter, and grown
    /// since the last round by at least `snapshotBytes`, what the stores' current snapshots hold.
    func isDue(at now: MonotonicTime, lastCompleted: UInt64, oldestRetained: UInt64, snapshotBytes: UInt64) -> Bool {
        guard roundEndsAt == nil, now >= nextRoundAt, lastCompleted >= oldestRetained, loggedBytes >= snapshotBytes else {
            return false
        }
        return lastCompleted - oldestRetained + 1 > retain + max(retain / 4, 1)
    }

    /// Starts a round that asks each `(store, worker)`, ending at `deadline`; returns the query id for each.
    mutating func begin(asking replicas: [(store: String, worker: String)], until deadline: MonotonicTime) -> [(queryID: String, store: String, worker: String)] {
        roundEndsAt = deadline
        loggedBytes = 0
        asks = [:]
        return replicas.map { replica in
            issued += 1
            let queryID = "\(Self.idPrefix)\(issued)"
            awaiting[queryID] = replica
            asks[replica.store] = .unanswered(worker: replica.worker)
            return (queryID, replica.store, replica.worker)
        }
    }

    private static let idPrefix = "snapshot-"

    /// Whether `requestID` has the shape of a snapshot request's id (`snapshot-1`…): a replica's answer under such an
    /// id that is no longer awaited is a late answer, not a malformed message.
    static func isQueryID(_ requestID: String) -> Bool { requestID.isIssuedID(prefix: idPrefix) }

    func awaits(_ queryID: String) -> Bool { awaiting[queryID] != nil }

    /// Takes an answer (a STATE, or an ERROR for it): the store it was for, if it was awaited.
    mutating func answer(_ queryID: String) -> String? {
        guard let asked = awaiting.removeValue(forKey: queryID) else { return nil }
        asks[asked.store] = .answered(worker: asked.worker)
        return asked.store
    }

    /// `worker` was lost or left: its answers will not come, and the round need not wait for them.
    mutating func abandon(askedOf worker: String) {
        for (queryID, asked) in awaiting where asked.worker == worker {
            awaiting[queryID] = nil
            asks[asked.store] = .lost(worker: worker)
        }
    }

    /// A streamed answer made progress: the round lasts at least until `deadline`, so a large state that keeps
    /// arriving is not cut off (docs/PROTOCOL.md, "Transfers").
    mutating func progressed(until deadline: MonotonicTime) {
        if let ends = roundEndsAt { roundEndsAt = max(ends, deadline) }
    }

    /// Ends the round under way once every answer came and no streamed answer is still `receiving`, or its deadline
    /// passed; true when it ended now.
    mutating func endIfOver(at now: MonotonicTime, receiving: Bool) -> Bool {
        guard let ends = roundEndsAt, (awaiting.isEmpty && !receiving) || now >= ends else { return false }
        awaiting.removeAll()
        roundEndsAt = nil
        nextRoundAt = now.advanced(by: .seconds(1))
        return true
    }

    /// How far the log may be dropped: through the oldest of the stores' snapshots, keeping `retain` entries; nil
    /// when fewer than `retain` entries completed.
    func cutoff(lastCompleted: UInt64, snapshotSequences: [UInt64]) -> UInt64? {
        guard lastCompleted > retain else { return nil }
        return min(snapshotSequences.min() ?? 0, lastCompleted - retain)
    }
}
