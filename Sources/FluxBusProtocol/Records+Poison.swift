/// The handler a worker's previous process died in, as HELLO reports it: the store it was running and the dispatch.
public struct HandlerCrash: Sendable, Hashable {
    /// The dispatch it was running; never 0 (0 on the wire means "no crash").
    public var sequence: UInt64
    /// The store whose handler was running.
    public var store: String
    /// How the process died, as the process saw it: `SIGILL`, `SIGSEGV`, `SIGABRT`….
    public var signal: String

    /// A crash report with the given fields.
    public init(sequence: UInt64, store: String, signal: String) {
        self.sequence = sequence
        self.store = store
        self.signal = signal
    }
}

/// An action marked poisoned for one store: no replica of the store runs it. A REPLAY carries the marks of its
/// entries; a replica skips the store at that sequence, and its dependents read the outcome recorded at completion.
public struct PoisonMark: Sendable, Hashable {
    /// The dispatch.
    public var sequence: UInt64
    /// The store that skips it.
    public var store: String
    /// Why, for operators: how many crashes, on which workers, by which signal.
    public var reason: String

    /// A mark with the given fields.
    public init(sequence: UInt64, store: String, reason: String) {
        self.sequence = sequence
        self.store = store
        self.reason = reason
    }
}

extension PoisonMark: WireItem {
    package init() { self.init(sequence: 0, store: "", reason: "") }

    package mutating func visit<V: WireVisitor>(_ visitor: inout V) throws(V.Failure) {
        try visitor.u64(&sequence, "sequence")
        try visitor.string(&store, "store")
        try visitor.string(&reason, "reason")
    }
}
