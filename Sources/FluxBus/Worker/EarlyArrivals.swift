import FluxBusProtocol

/// ACTIONs and RELEASEs that arrived before their turn, by sequence. ACTION and RELEASE travel on different sockets
/// and the stream may skip ahead of a gap, so either can come before the dispatch it belongs to starts here.
struct EarlyArrivals {
    /// ACTIONs kept; past this, later ones are dropped and fetched when their turn comes, so a flood cannot grow the
    /// worker without bound.
    static let actionLimit = BusDefaults.largestBatch

    private var actions: [UInt64: Message.Action] = [:]
    /// Released outputs, in the order they arrived: the first record of a store counts.
    private var releases: [UInt64: [StoreOutput]] = [:]

    /// Keeps an ACTION for later, unless the limit is reached.
    mutating func keep(_ action: Message.Action) {
        if actions.count < Self.actionLimit { actions[action.sequence] = action }
    }

    /// Keeps released outputs for a dispatch that has not begun.
    mutating func keep(_ outputs: [StoreOutput], for sequence: UInt64) {
        releases[sequence, default: []].append(contentsOf: outputs)
    }

    /// The ACTION kept for `sequence`, no longer kept.
    mutating func takeAction(_ sequence: UInt64) -> Message.Action? { actions.removeValue(forKey: sequence) }

    /// The outputs released for `sequence`, no longer kept.
    mutating func takeReleases(_ sequence: UInt64) -> [StoreOutput]? { releases.removeValue(forKey: sequence) }

    /// Drops what was kept for `sequence` alone: one step forward can only have made that stale. A full sweep per
    /// dispatch would copy the buffers each time, quadratic over a batch whose later actions wait here.
    mutating func forget(_ sequence: UInt64) {
        // Called once per applied sequence, when usually nothing is kept: an empty dictionary's removal still hashes.
        if !actions.isEmpty { actions[sequence] = nil }
        if !releases.isEmpty { releases[sequence] = nil }
    }

    /// Drops everything kept for `sequence` and earlier, after a jump (a snapshot's).
    mutating func forget(through sequence: UInt64) {
        actions = actions.filter { $0.key > sequence }
        releases = releases.filter { $0.key > sequence }
    }
}
