// The list items of a traced dispatch: what a worker measured (ACK) and the waterfall a client gets (RESULT).
// Each type's `visit` is its wire layout, field by field.

/// When one store ran for a traced dispatch, in microseconds from the worker's receipt of the ACTION, on the worker's
/// own clock: no other process subtracts these from its own times, it only places them between its own.
public struct StoreTiming: Sendable, Hashable {
    /// The store.
    public var store: String
    /// When it became ready to run: 0, or the receipt of the RELEASE it waited for.
    public var readyMicros: UInt64
    /// When its handler started.
    public var startedMicros: UInt64
    /// When its handler (with its output and digest) finished.
    public var finishedMicros: UInt64
    /// When the ACK carrying this timing was handed to the socket.
    public var sentMicros: UInt64

    /// A timing with the given fields.
    public init(store: String, readyMicros: UInt64, startedMicros: UInt64, finishedMicros: UInt64, sentMicros: UInt64) {
        self.store = store
        self.readyMicros = readyMicros
        self.startedMicros = startedMicros
        self.finishedMicros = finishedMicros
        self.sentMicros = sentMicros
    }
}

extension StoreTiming: WireItem {
    package init() { self.init(store: "", readyMicros: 0, startedMicros: 0, finishedMicros: 0, sentMicros: 0) }

    package mutating func visit<V: WireVisitor>(_ visitor: inout V) throws(V.Failure) {
        try visitor.string(&store, "store")
        try visitor.u64(&readyMicros, "ready")
        try visitor.u64(&startedMicros, "started")
        try visitor.u64(&finishedMicros, "finished")
        try visitor.u64(&sentMicros, "sent")
    }
}

/// One line of a traced dispatch's waterfall: a step, where it happened, and when, in microseconds from the
/// coordinator's receipt of the DISPATCH on the coordinator's clock.
public struct TraceStep: Sendable, Hashable {
    /// Where it happened: `coordinator`, a worker's id, or `network` for time left over between two processes.
    public var process: String
    /// What happened, such as `log commit` or `run country`.
    public var step: String
    /// When it started.
    public var startMicros: UInt64
    /// When it ended (equal to `startMicros` for an instant).
    public var endMicros: UInt64

    /// A step with the given fields.
    public init(process: String, step: String, startMicros: UInt64, endMicros: UInt64) {
        self.process = process
        self.step = step
        self.startMicros = startMicros
        self.endMicros = endMicros
    }
}

extension TraceStep: WireItem {
    package init() { self.init(process: "", step: "", startMicros: 0, endMicros: 0) }

    package mutating func visit<V: WireVisitor>(_ visitor: inout V) throws(V.Failure) {
        try visitor.string(&process, "process")
        try visitor.string(&step, "step")
        try visitor.u64(&startMicros, "start")
        try visitor.u64(&endMicros, "end")
    }
}
