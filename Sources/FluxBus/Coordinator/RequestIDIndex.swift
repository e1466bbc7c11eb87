/// Every request id the log may hold, in memory, so that a fresh request id (the common case: each dispatch brings a
/// new one) costs a set lookup instead of a SELECT that always misses. It is a superset of the log's `request` table:
/// an id is added when it is written, and the set is rebuilt from the table (``rebuild(from:)``) only after it has
/// doubled, so that ids compaction deleted leave it too, at an amortized cost of O(1) per request.
struct RequestIDIndex {
    private var ids: Set<String> = []
    /// The size after the last rebuild: past twice this, the next rebuild is due.
    private var sizeAtRebuild = 0
    /// Lookups that went to the log (a possible hit), for tests.
    private(set) var logLookups = 0

    /// Whether `id` may be in the log; false means it certainly is not.
    mutating func mayContain(_ id: String) -> Bool {
        guard ids.contains(id) else { return false }
        logLookups += 1
        return true
    }

    mutating func insert(_ id: String) {
        if !id.isEmpty { ids.insert(id) }
    }

    /// Whether enough ids were added since the last rebuild that it is due.
    var isRebuildDue: Bool { ids.count > 2 * max(sizeAtRebuild, 1_024) }

    /// Starts over from the ids the log holds now.
    mutating func rebuild(from logged: [String]) {
        ids = Set(logged)
        sizeAtRebuild = ids.count
    }
}
