/// One element of a ``StateWatch``: a store's whole state as of one sequence of the bus.
public struct StateChange<State: Sendable>: Sendable {
    /// Why this element was produced.
    public enum Kind: Sendable, Hashable {
        /// The first element: a live replica's state, as it was at ``StateChange/sequence``.
        case initial
        /// The store ran the action ``StateChange/actionType`` at ``StateChange/sequence`` with outcome ok. (Where the
        /// bus recorded its outcome as unknown, no replica having answered, a run that succeeds here counts too: a
        /// replica replaying that sequence applies it the same way.)
        case changed
        /// The watcher fell further behind than the coordinator's log reaches: the dispatches between the previous
        /// element and this one are no longer in the history, so they were not seen one by one. This element is a
        /// fresh state from a live replica, as it was at ``StateChange/sequence``; watching goes on from there.
        case resynchronized
    }

    /// Why this element was produced.
    public let kind: Kind
    /// The last sequence the state includes.
    public let sequence: UInt64
    /// The action that made this change; nil for ``Kind/initial`` and ``Kind/resynchronized``.
    public let actionType: String?
    /// The store's state after ``sequence``: what every replica of the store holds at that sequence.
    public let state: State

    /// Whether changes were not seen one by one before this element (see ``Kind/resynchronized``).
    public var isResynchronized: Bool { kind == .resynchronized }

    package init(kind: Kind, sequence: UInt64, actionType: String?, state: State) {
        self.kind = kind
        self.sequence = sequence
        self.actionType = actionType
        self.state = state
    }
}
