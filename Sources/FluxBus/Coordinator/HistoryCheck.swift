/// What a joining worker's history is, held to the coordinator's log (``CoordinatorEngine/historyCheck(for:)``).
enum HistoryCheck: Equatable {
    /// Nothing in the log contradicts it, or the log holds nothing to hold it to.
    case consistent
    /// The log lost or changed what the worker applied; the reason says how. The worker is refused (REJECT 9), or a
    /// durable coordinator stops.
    case conflict(String)
    /// The log could not be read to tell. The worker is refused for now (REJECT 11) and checked again at its next
    /// HELLO: welcomed on its word, one whose history the log lost would serve a state the bus does not hold.
    case unreadable(String)
}
