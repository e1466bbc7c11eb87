import FluxBusProtocol

/// The handler crashes workers reported in HELLO, counted per (store, sequence): the evidence for marking an action
/// poisoned. A process's report counts once, however many HELLOs it sends. Kept in memory: a restarted coordinator
/// counts afresh (the crash loop goes on until the bound is reached again).
struct HandlerCrashes {
    struct Key: Hashable {
        let sequence: UInt64
        let store: String
    }

    struct Tally {
        var count = 0
        var workers: [String] = []
        var signals: [String] = []

        /// "3 times (SIGILL on w1)", for the mark's reason.
        var summary: String {
            "\(count == 1 ? "once" : "\(count) times") (\(signals.joined(separator: ", ")) on \(workers.joined(separator: ", ")))"
        }
    }

    private(set) var tallies: [Key: Tally] = [:]
    /// Worker id → the instance whose report was counted last.
    private var counted: [String: UInt64] = [:]
    /// At most this many (store, sequence) pairs are kept; past it the oldest sequence goes.
    let limit: Int

    init(limit: Int = 1_024) {
        self.limit = limit
    }

    /// Counts a process's report; nil when this process's report was counted already.
    mutating func count(_ crash: HandlerCrash, worker: String, instance: UInt64) -> Tally? {
        guard counted[worker] != instance else { return nil }
        counted[worker] = instance
        let key = Key(sequence: crash.sequence, store: crash.store)
        var tally = tallies[key] ?? Tally()
        tally.count += 1
        if !tally.workers.contains(worker) { tally.workers.append(worker) }
        if !tally.signals.contains(crash.signal) { tally.signals.append(crash.signal) }
        tallies[key] = tally
        if tallies.count > limit, let oldest = tallies.keys.min(by: { $0.sequence < $1.sequence }) { tallies[oldest] = nil }
        return tally
    }

    mutating func forget(_ key: Key) { tallies[key] = nil }

    /// The sequence with the most crashes reported for `store`, and their count; nil when none.
    func worst(of store: String) -> (sequence: UInt64, count: Int)? {
        tallies.filter { $0.key.store == store }.max { ($0.value.count, $0.key.sequence) < ($1.value.count, $1.key.sequence) }
            .map { ($0.key.sequence, $0.value.count) }
    }
}
