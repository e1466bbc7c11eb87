/// What a worker has told its log about its stores' histories: a store new to the bus builds its state from the
/// actions dispatched before it joined, and where the coordinator's log no longer held the start, the operator must
/// hear that its history starts later than sequence 1.
struct HistoryNotes {
    /// Stores that started from an empty SNAPSHOT the coordinator sent because its log was compacted: the sequence
    /// that empty state stands at.
    private(set) var emptyStarts: [String: UInt64] = [:]
    /// Stores whose history replay this process has announced.
    private var announced: Set<String> = []

    mutating func startedEmpty(_ store: String, at sequence: UInt64) { emptyStarts[store] = sequence }

    /// True the first time `store` is seen replaying history in this process.
    mutating func announce(_ store: String) -> Bool { announced.insert(store).inserted }
}
