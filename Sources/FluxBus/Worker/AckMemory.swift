import FluxBusProtocol

/// The results this worker acknowledged for the sequences it applied last. A duplicate ACTION is answered from here,
/// never by running a store again; a checkpoint carries the newest, to do the same after a restart.
struct AckMemory {
    /// Sequences remembered; past this the oldest are forgotten. The coordinator re-sends only what is in flight, so
    /// a few thousand cover every duplicate that can still arrive.
    static let limit = 4_096

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
        results.keys.filter { $0 <= sequence }.sorted().suffix(count).map { ($0, results[$0]!) }
    }
}
