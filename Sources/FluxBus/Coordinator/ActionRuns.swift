import FluxBusProtocol

/// One request's ACTIONs, joined as they are made into the runs (ACTIONS) that ``Outbox`` would make of them, within
/// the same limits. They share the request's epoch and traceparent and follow one another in sequence, so only the
/// action type and the plan are compared: joined in the outbox instead, each of a batch's thousand ACTIONs was a
/// message of its own, its fields compared with the run's, about a thousand instructions apiece.
struct ActionRuns {
    private var out: [Message] = []
    /// The open run's first ACTION, alone until a second joins it.
    private var first: Message.Action?
    /// The open run, once it has two; its entries grow apart from it, so that appending never copies them.
    private var run: Message.Actions?
    private var entries: [ActionEntry] = []
    private var count = 0
    private var bytes = 0

    /// Adds the request's next ACTION, the sequence after the last one added.
    mutating func add(_ action: Message.Action) {
        // Counted as MessageRuns.Joiner counts a run's size.
        let size = action.payload.count + (action.error?.utf8.count ?? 0) + 8
        guard joins(action, size: size) else {
            close()
            first = action
            count = 1
            bytes = size
            return
        }
        if let single = first.take() {
            run = Message.Actions(
                epoch: single.epoch, firstSequence: single.sequence, actionType: single.actionType, plan: single.plan,
                traceparent: single.traceparent, entries: [])
            entries.reserveCapacity(16)
            entries.append(ActionEntry(payload: single.payload, error: single.error))
        }
        entries.append(ActionEntry(payload: action.payload, error: action.error))
        count += 1
        bytes += size
    }

    /// The ACTIONs and runs so far, in order, a run of one as its ACTION.
    mutating func take() -> [Message] {
        close()
        defer { out = [] }
        return out
    }

    private func joins(_ action: Message.Action, size: Int) -> Bool {
        guard count > 0, count < Outbox<Int>.bundleCount, bytes + size <= Outbox<Int>.bundleBytes else { return false }
        let (type, plan) = run.map { ($0.actionType, $0.plan) } ?? (first!.actionType, first!.plan)
        return type.hasSameBytes(as: action.actionType) && plan == action.plan
    }

    private mutating func close() {
        if let single = first.take() {
            out.append(.action(single))
        } else if var open = run.take() {
            open.entries = entries
            out.append(.actions(open))
            entries = []
        }
        count = 0
        bytes = 0
    }
}
