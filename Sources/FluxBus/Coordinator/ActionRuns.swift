import FluxBusProtocol

/// One request's ACTIONs, joined as they are made into the runs (ACTIONS) that ``Outbox`` would make of them, within
/// the same limits. They share the request's epoch and traceparent and follow one another in sequence, so only the
/// action type and the plan are compared: joined in the outbox instead, each of a batch's thousand ACTIONs was a
/// message of its own, its fields compared with the run's, about a thousand instructions apiece.
struct ActionRuns {
    /// The open run's first ACTION, alone until a second joins it.
    private var first: Message.Action?
    /// The open run, once it has two; its entries grow apart from it, so that appending never copies them.
    private var run: Message.Actions?
    private var entries: [ActionEntry] = []
    private var count = 0
    private var bytes = 0

    /// Adds the request's next ACTION, the sequence after the last one added; a run it cannot join goes to `send`.
    mutating func add(_ action: Message.Action, closing send: (consuming Message) -> Void) {
        let size = MessageRuns.size(of: action)
        guard joins(action, size: size) else {
            close(send)
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

    /// Sends the open run, a run of one as its ACTION, and starts empty again. Sent through a closure rather than
    /// returned in a list: a lock-step dispatch's one ACTION would allocate that list.
    mutating func finish(_ send: (consuming Message) -> Void) { close(send) }

    private func joins(_ action: Message.Action, size: Int) -> Bool {
        guard count > 0, count < Outbox<Int>.bundleCount, bytes + size <= Outbox<Int>.bundleBytes else { return false }
        let (type, plan) = run.map { ($0.actionType, $0.plan) } ?? (first!.actionType, first!.plan)
        return type.hasSameBytes(as: action.actionType) && plan == action.plan
    }

    private mutating func close(_ send: (consuming Message) -> Void) {
        if let single = first.take() {
            send(.action(single))
        } else if var open = run.take() {
            open.entries = entries
            entries = []
            send(.actions(open))
        }
        count = 0
        bytes = 0
    }
}
