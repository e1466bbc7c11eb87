import FluxBusProtocol

/// Answered requests whose outcome for some store is not known yet: no replica of it answered in time. The action is
/// in the log, so a replica applies it when it comes back or catches up, and reports what happened (a late ACK, or
/// its result while replaying an entry recorded as unknown). The request id's recorded answer then says so: a client
/// asking again with the same id learns the outcome.
struct UnknownOutcomes {
    /// One unknown entry of an answer: a replica's (`worker`), or the store's "no live replica" (`worker` empty).
    private struct Key: Hashable {
        let sequence: UInt64
        let store: String
        let worker: String
    }

    /// (sequence, store, worker) → the request id whose answer reports it unknown.
    private var requests: [Key: String] = [:]
    /// Oldest first, to forget the oldest past ``limit``.
    private var order = FIFO<Key>()
    let limit: Int

    init(limit: Int = 100_000) {
        self.limit = limit
    }

    var count: Int { requests.count }

    /// Remembers the unknown outcomes an answer reports. Every answer passes here, and most report none: their
    /// outcomes are looked at in place, not listed first.
    mutating func remember(_ answer: Message, requestID: String) {
        switch answer {
        case .result(let result):
            for outcome in result.outcomes where outcome.status == .unknown { remember(outcome, of: result.sequence, requestID) }
        case .batchResult(let batch):
            for failure in batch.failures where failure.outcome.status == .unknown {
                remember(failure.outcome, of: failure.sequence, requestID)
            }
        default: return
        }
        while requests.count > limit, let oldest = order.pop() { requests[oldest] = nil }
    }

    private mutating func remember(_ outcome: Outcome, of sequence: UInt64, _ requestID: String) {
        let key = Key(sequence: sequence, store: outcome.store, worker: outcome.worker)
        guard requests.updateValue(requestID, forKey: key) == nil else { return }
        order.push(key)
    }

    /// The request id whose answer reports `worker`'s replica of `store` unknown for `sequence`, or the store
    /// unknown for want of a live replica (which any replica's report tells), forgetting it. A replica whose outcome
    /// the answer already holds resolves nothing: its report must not stand in for another replica's.
    mutating func resolve(sequence: UInt64, store: String, worker: String) -> String? {
        requests.removeValue(forKey: Key(sequence: sequence, store: store, worker: worker))
            ?? requests.removeValue(forKey: Key(sequence: sequence, store: store, worker: ""))
    }

    /// Every request id whose answer reports `store` unknown for `sequence`, on any replica, forgetting them.
    mutating func resolveAll(sequence: UInt64, store: String) -> [String] {
        let keys = requests.keys.filter { $0.sequence == sequence && $0.store == store }
        return Array(Set(keys.compactMap { requests.removeValue(forKey: $0) })).sorted()
    }
}

extension Message {
    /// The answer with a replica's late outcome for `sequence` in place of the store's unknown one: the replica's own
    /// entry, or the "no live replica" entry. An `ok` leaves a batch's failures.
    func resolving(sequence: UInt64, with known: Outcome) -> Message {
        func replaced(_ outcomes: [Outcome]) -> [Outcome] {
            var result = outcomes
            let index = result.firstIndex { $0.store == known.store && $0.status == .unknown && $0.worker == known.worker }
                ?? result.firstIndex { $0.store == known.store && $0.status == .unknown && $0.worker.isEmpty }
            // Only an unknown entry is replaced: a replica already reported is never listed twice.
            if let index { result[index] = known }
            return result
        }
        switch self {
        case .result(var result) where result.sequence == sequence:
            result.outcomes = replaced(result.outcomes)
            return .result(result)
        case .batchResult(var batch):
            let mine = replaced(batch.failures.filter { $0.sequence == sequence }.map(\.outcome))
                .filter { $0.status != .ok }.map { BatchFailure(sequence: sequence, outcome: $0) }
            // In place, keeping the failures in sequence order.
            let start = batch.failures.firstIndex { $0.sequence >= sequence } ?? batch.failures.endIndex
            let end = batch.failures[start...].firstIndex { $0.sequence > sequence } ?? batch.failures.endIndex
            batch.failures.replaceSubrange(start..<end, with: mine)
            if sequence == batch.firstSequence + UInt64(batch.count) - 1 { batch.outcomes = replaced(batch.outcomes) }
            return .batchResult(batch)
        default:
            return self
        }
    }
}
