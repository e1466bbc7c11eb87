import FluxBusProtocol

/// Reading ``MemoryLogTables`` back, by the SQLite log's queries (``ActionLog``'s `read`, `entries`, `loggedEntry`).
extension MemoryLogTables {
    /// The ``LogStorage/loggedEntry(at:)`` of the action at `sequence`, if the tables hold it.
    func loggedEntry(at sequence: UInt64) -> LoggedEntry? {
        index(of: sequence).map { LoggedEntry(chain: actions[$0].chain, epoch: actions[$0].epoch) }
    }

    /// The index of the action logged as `sequence`.
    func index(of sequence: UInt64) -> Int? {
        guard let first = actions.first?.sequence, sequence >= first else { return nil }
        // Sequences have no gaps in practice: then the index is the distance from the first.
        let guess = sequence - first
        if guess < UInt64(actions.count), actions[Int(guess)].sequence == sequence { return Int(guess) }
        let index = firstIndex(notBelow: sequence)
        return index < actions.count && actions[index].sequence == sequence ? index : nil
    }

    /// The index of the first action at or after `sequence`.
    func firstIndex(notBelow sequence: UInt64) -> Int {
        var (low, high) = (0, actions.count)
        while low < high {
            let middle = (low + high) / 2
            if actions[middle].sequence < sequence { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// Completed entries with sequences in `range`, at most `maximum` of them (all of them when it is negative, as
    /// SQL's LIMIT), oldest first, each with its action's payload.
    func entries(in range: ClosedRange<UInt64>, maximum: Int) -> [ReplayEntry] {
        var entries: [ReplayEntry] = []
        var index = firstIndex(notBelow: range.lowerBound)
        while index < actions.count, actions[index].sequence <= range.upperBound, maximum < 0 || entries.count < maximum {
            if var entry = actions[index].entry {
                entry.payload = actions[index].action.payload
                entries.append(entry)
            }
            index += 1
        }
        return entries
    }

    /// What the log holds, as a log opened again reads it: the sequences, what was logged and not completed with its
    /// decisions and plans, the stores, and the poison marks. Drops the chunks of snapshots never recorded.
    /// - Throws: ``LogDamage`` when the completed entries have gaps.
    func recovery() throws -> (LogRecovery, LogContinuity.Holding, chainTail: UInt64) {
        for (store, bySequence) in chunks { chunks[store] = bySequence.filter { snapshots[store]?.sequence == $0.key } }
        var recovered = LogRecovery()
        recovered.lastSequence = actions.last?.sequence ?? 0
        recovered.lastCompleted = actions.last { $0.entry != nil }?.sequence ?? 0
        recovered.lastEpoch = epochs.max() ?? 0
        for row in actions where row.sequence > recovered.lastCompleted {
            recovered.addPending(
                sequence: row.sequence, action: row.action, requestID: row.requestID, batchFirst: row.batchFirst,
                batchSize: row.batchSize, fingerprint: requests[row.batchFirst ?? row.sequence].flatMap { $0.requestID == row.requestID ? $0.fingerprint : nil })
        }
        for (sequence, outputs) in decisions where sequence > recovered.lastCompleted {
            // As the `decision` table's key orders them.
            recovered.decisions[sequence] = outputs.sorted { $0.store < $1.store }
        }
        let firsts = Set(recovered.pending.map { $0.batchFirst ?? $0.sequence })
        recovered.plans = plans.filter { firsts.contains($0.key) }
        recovered.stores = stores
        recovered.histories = histories
        recovered.declarations = stores.compactMap { declarations[$0] }
        recovered.poisonMarks = poison
        let completed = UInt64(actions.count { $0.entry != nil })
        if let oldest = actions.first?.sequence, recovered.lastCompleted >= oldest, completed != recovered.lastCompleted - oldest + 1 {
            throw LogDamage(detail: "completed dispatches \(oldest)…\(recovered.lastCompleted) have gaps")
        }
        let holding = LogContinuity.Holding(
            busID: busID ?? (recovered.lastSequence > 0 ? "" : nil), lastSequence: recovered.lastSequence,
            oldestRetained: actions.first?.sequence ?? recovered.lastSequence + 1)
        return (recovered, holding, actions.last?.chain ?? 0)
    }
}
