import FluxBusProtocol

/// The completed dispatches the coordinator keeps in memory, oldest first, so that a worker that missed some can
/// fetch them with their recorded outputs. Bounded: beyond `limit` the oldest entries are dropped, and a worker
/// that needs them is told it is too far behind.
struct History {
    let limit: Int
    private var entries: [ReplayEntry] = []
    private var head = 0

    init(limit: Int) {
        self.limit = max(1, limit)
    }

    var count: Int { entries.count - head }

    /// The oldest sequence still held, or nil when empty.
    var oldestSequence: UInt64? { head < entries.count ? entries[head].sequence : nil }

    mutating func append(_ entry: ReplayEntry) {
        entries.append(entry)
        if count > limit { head += 1 }
        // Compact now and then, so dropping the oldest stays O(1) amortised.
        if head > 4096 && head * 2 > entries.count {
            entries.removeFirst(head)
            head = 0
        }
    }

    /// The entries with sequences in `range`, at most `maximum` of them.
    func entries(in range: ClosedRange<UInt64>, maximum: Int) -> ArraySlice<ReplayEntry> {
        guard let oldest = oldestSequence, range.upperBound >= oldest else { return [] }
        // Sequences are consecutive, so positions follow from them.
        let start = head + Int(max(range.lowerBound, oldest) - oldest)
        guard start < entries.count else { return [] }
        let end = min(entries.count, start + maximum, head + Int(range.upperBound - oldest) + 1)
        return start < end ? entries[start..<end] : []
    }
}
