/// Every request id the log may hold, in memory, with the first sequence of its request: the `request` table is keyed
/// by that sequence, so a commit appends to the table's last page rather than writing into a tree of random ids. A
/// fresh request id (the common case: each dispatch brings a new one) costs a dictionary lookup instead of a SELECT
/// that always misses, and a known one a SELECT by sequence. The index is a superset of the table: an id is added when
/// it is written, and the index is rebuilt from the table (``rebuild(from:)``) only after it has doubled, so that ids
/// compaction deleted leave it too, at an amortized cost of O(1) per request.
struct RequestIDIndex {
    private var sequences: [String: UInt64] = [:]
    /// The size after the last rebuild: past twice this, the next rebuild is due.
    private var sizeAtRebuild = 0
    /// Lookups that went to the log (a possible hit), for tests.
    private(set) var logLookups = 0

    /// The first sequence of the request `id` names, if the log may hold it; nil means it certainly does not.
    mutating func sequence(of id: String) -> UInt64? {
        guard let sequence = sequences[id] else { return nil }
        logLookups += 1
        return sequence
    }

    /// Records that the log holds `id`, for the request starting at `sequence`: its action's row, or an answer's row
    /// written anew (`onlyIfAbsent`: an answer never moves an id the index already holds). An id used again after
    /// compaction dropped its old request points at the new one.
    mutating func insert(_ id: String, sequence: UInt64, onlyIfAbsent: Bool = false) {
        guard !id.isEmpty, !onlyIfAbsent || sequences[id] == nil else { return }
        sequences[id] = sequence
    }

    /// Whether enough ids were added since the last rebuild that it is due.
    var isRebuildDue: Bool { sequences.count > 2 * max(sizeAtRebuild, Self.rebuiltAtLeast) }

    /// Starts over from the requests the log holds now, in order of sequence: a later one wins.
    mutating func rebuild(from logged: [(requestID: String, sequence: UInt64)]) {
        // Room for every id until the next rebuild: growing rehashed each id held, about once per id added.
        var fresh = [String: UInt64](minimumCapacity: 2 * max(logged.count, Self.rebuiltAtLeast) + 1)
        for (id, sequence) in logged {
            if let earlier = fresh.updateValue(sequence, forKey: id), earlier > sequence { fresh[id] = earlier }
        }
        sequences = fresh
        sizeAtRebuild = sequences.count
    }

    /// However few ids the last rebuild found, the next one waits until twice this many are held.
    private static var rebuiltAtLeast: Int { 1_024 }
}
