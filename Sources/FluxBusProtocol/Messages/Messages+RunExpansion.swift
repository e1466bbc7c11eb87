// Taking a run apart: the messages an ACTIONS, ACKS or COMPLETIONS stands for, which `Codec.decodeAll` hands on one
// by one, after checking that the run's counts agree with its lists (``MessageRuns`` joins them on the sending side).

extension Message {
    /// Appends the messages this run stands for to `messages`, in order, and says so; a message that is not a run
    /// appends nothing and answers false. With `keepingAcks`, an ACKS is checked the same way and appended whole, for
    /// a receiver that walks it with ``Message/Acks/forEachAck(_:)``.
    /// - Throws: ``DecodeError`` `badRun` when the run is empty, its counts disagree, a digest it leaves to ``digests``
    ///   is not 0, or its sequences would pass the largest u64.
    package func appendExpanded(to messages: inout [Message], keepingAcks: Bool = false) throws(DecodeError) -> Bool {
        switch self {
        case .actions(let run):
            let count = run.entries.count
            try Self.checkRun(.actions, count: count, first: run.firstSequence)
            messages.reserveCapacity(messages.count + count)
            for index in run.entries.indices {
                messages.append(.action(.init(
                    epoch: run.epoch, sequence: run.firstSequence + UInt64(index), actionType: run.actionType,
                    payload: run.entries[index].payload, error: run.entries[index].error, plan: run.plan,
                    traceparent: run.traceparent)))
            }
        case .acks(let run):
            let count = Int(run.count)
            try Self.checkRun(.acks, count: count, first: run.firstSequence)
            guard !run.results.isEmpty, run.results.allSatisfy({ $0.digest == 0 }) else {
                throw DecodeError(code: .badRun, command: .acks, field: "results", value: run.results.count)
            }
            try Self.checkDigests(.acks, run.digests, field: "digests", count: count * run.results.count)
            if keepingAcks {
                messages.append(self)
                return true
            }
            messages.reserveCapacity(messages.count + count)
            for index in 0..<count {
                let results = Self.filling(run.results, index: index, from: run.digests) { $0.digest = $1 }
                messages.append(.ack(.init(epoch: run.epoch, sequence: run.firstSequence + UInt64(index), results: results)))
            }
        case .completions(let run):
            let count = Int(run.count)
            try Self.checkRun(.completions, count: count, first: run.firstSequence)
            guard run.outcomes.allSatisfy({ $0.digest == 0 }) else {
                throw DecodeError(code: .badRun, command: .completions, field: "outcomes", value: run.outcomes.count)
            }
            try Self.checkDigests(.completions, run.elapsedMicros, field: "elapsedMicros", count: count)
            try Self.checkDigests(.completions, run.digests, field: "digests", count: count * run.outcomes.count)
            messages.reserveCapacity(messages.count + count)
            for index in 0..<count {
                let outcomes = Self.filling(run.outcomes, index: index, from: run.digests) { $0.digest = $1 }
                messages.append(.completed(.init(
                    epoch: run.epoch, sequence: run.firstSequence + UInt64(index), actionType: run.actionType,
                    elapsedMicros: run.elapsedMicros.digest(at: index), outcomes: outcomes)))
            }
        default:
            return false
        }
        return true
    }

    /// The `index`-th message's copy of a run's items, each with its own digest: the run carries them `items.count`
    /// per message, in order.
    private static func filling<Item>(
        _ items: [Item], index: Int, from digests: [UInt8], _ set: (inout Item, UInt64) -> Void
    ) -> [Item] {
        var filled = items
        for position in filled.indices { set(&filled[position], digests.digest(at: index * items.count + position)) }
        return filled
    }

    private static func checkRun(_ command: Command, count: Int, first: UInt64) throws(DecodeError) {
        guard count >= 1 else { throw DecodeError(code: .badRun, command: command, field: "count", value: 0) }
        guard first <= UInt64.max - UInt64(count - 1) else {
            throw DecodeError(code: .badRun, command: command, field: "firstSequence", value: count)
        }
    }

    private static func checkDigests(_ command: Command, _ bytes: [UInt8], field: String, count: Int) throws(DecodeError) {
        guard bytes.count == 8 * count else {
            throw DecodeError(code: .badRun, command: command, field: field, value: bytes.count, limit: 8 * count)
        }
    }
}

extension Message.Acks {
    /// Hands `body` each ACK the run stands for, in order, as ``Codec/decodeAll(_:keepingAcks:)`` checked it: one value
    /// whose sequence and digests are rewritten in place for the next, where taking the run apart allocates a list of
    /// results per ACK. A coordinator receives a batch's thousand ACKs this way.
    package func forEachAck(_ body: (Message.Ack) -> Void) {
        var ack = Message.Ack(epoch: epoch, sequence: firstSequence, results: results)
        let width = results.count
        for index in 0..<Int(count) {
            ack.sequence = firstSequence + UInt64(index)
            for position in ack.results.indices { ack.results[position].digest = digests.digest(at: index * width + position) }
            body(ack)
        }
    }
}
