import FluxBusProtocol

/// The results this worker acknowledged for the sequences it applied last. A duplicate ACTION is answered from here,
/// never by running a store again; a checkpoint carries the newest, to do the same after a restart.
struct AckMemory {
    /// Sequences remembered; past this the oldest are forgotten. The coordinator re-sends only what is in flight: at
    /// most `--max-in-flight` (4,096) dispatches, or one batch that started alone, of up to
    /// ``BusDefaults/largestBatch``. (With 4,096, a coordinator restarted during a batch of 10,000 wrote off a worker
    /// that had applied it all, for the acknowledgements it had forgotten.)
    static let limit = BusDefaults.largestBatch

    private var results: [UInt64: [StoreResult]] = [:]
    /// The remembered sequences in the order they were remembered, to forget the oldest first.
    private var order = FIFO<UInt64>()

    /// Remembers what was acknowledged for `sequence`; nothing, when nothing was.
    mutating func remember(_ sequence: UInt64, _ acknowledged: [StoreResult]) {
        guard !acknowledged.isEmpty else { return }
        results[sequence] = acknowledged
        order.push(sequence)
        while order.count > Self.limit, let old = order.pop() { results[old] = nil }
    }

    /// What was acknowledged for `sequence`, if it is still remembered.
    func results(for sequence: UInt64) -> [StoreResult]? { results[sequence] }

    /// The newest `count` remembered sequences at or below `sequence`, oldest first, with their results.
    func recent(_ count: Int, through sequence: UInt64) -> [(sequence: UInt64, results: [StoreResult])] {
        // Sequences are remembered as they finish, in ascending order: the newest are the last, and no sort is needed
        // over the thousands remembered.
        var newest: [(sequence: UInt64, results: [StoreResult])] = []
        for remembered in order.elements.reversed() where remembered <= sequence {
            guard newest.count < count else { break }
            if let kept = results[remembered] { newest.append((remembered, kept)) }
        }
        return newest.reversed()
    }
}
