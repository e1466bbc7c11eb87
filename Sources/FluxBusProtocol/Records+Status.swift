// The list items of STATUS and GRAPH. Each type's `visit` is its wire layout, field by field.

/// One worker as STATUS reports it.
public struct WorkerStatus: Sendable, Hashable {
    /// The worker's id.
    public var id: String
    /// Its standing with the coordinator.
    public var state: WorkerState
    /// The stores it hosts.
    public var stores: [String]
    /// The last sequence it reported applied.
    public var lastApplied: UInt64
    /// Milliseconds since the coordinator last heard from it.
    public var heartbeatAgeMillis: UInt32

    /// A worker status with the given fields.
    public init(id: String, state: WorkerState, stores: [String], lastApplied: UInt64, heartbeatAgeMillis: UInt32) {
        self.id = id
        self.state = state
        self.stores = stores
        self.lastApplied = lastApplied
        self.heartbeatAgeMillis = heartbeatAgeMillis
    }
}

extension WorkerStatus: WireItem {
    package init() { self.init(id: "", state: .live, stores: [], lastApplied: 0, heartbeatAgeMillis: 0) }

    package mutating func visit<V: WireVisitor>(_ visitor: inout V) throws(V.Failure) {
        try visitor.string(&id, "id")
        try visitor.enumeration(&state, "state")
        try visitor.list(&stores, "stores")
        try visitor.u64(&lastApplied, "lastApplied")
        try visitor.u32(&heartbeatAgeMillis, "heartbeatAgeMillis")
    }
}

/// One replica of a store as STATUS reports it.
public struct Replica: Sendable, Hashable {
    /// The worker hosting it.
    public var worker: String
    /// The last sequence it applied.
    public var lastApplied: UInt64
    /// Its state digest at `lastApplied`.
    public var digest: UInt64

    /// A replica with the given fields.
    public init(worker: String, lastApplied: UInt64, digest: UInt64) {
        self.worker = worker
        self.lastApplied = lastApplied
        self.digest = digest
    }
}

extension Replica: WireItem {
    package init() { self.init(worker: "", lastApplied: 0, digest: 0) }

    package mutating func visit<V: WireVisitor>(_ visitor: inout V) throws(V.Failure) {
        try visitor.string(&worker, "worker")
        try visitor.u64(&lastApplied, "lastApplied")
        try visitor.u64(&digest, "digest")
    }
}

/// One store as STATUS reports it: its declaration, what it waits on now, and its replicas.
public struct StoreStatus: Sendable, Hashable {
    /// The store's name.
    public var name: String
    /// The stores it depends on.
    public var dependsOn: [String]
    /// Whether it handles every action type.
    public var handlesAll: Bool
    /// The action types it handles, when `handlesAll` is false.
    public var handles: [String]
    /// The stores of the in-flight dispatch it is still waiting for; empty when idle.
    public var waitingFor: [String]
    /// The first sequence at which its replicas' digests disagreed; 0 when they never did.
    public var divergedAt: UInt64
    /// Its replicas.
    public var replicas: [Replica]
    /// The sequence of the newest snapshot of its state the coordinator holds; 0 when it holds none.
    public var snapshotSequence: UInt64
    /// How many actions the coordinator marked poisoned for it (a replica's handler crashed on them repeatedly).
    public var poisonedCount: UInt32
    /// The newest of them; 0 when none.
    public var lastPoisoned: UInt64
    /// A dispatch its replicas' handlers crashed on and that is not (yet) poisoned; 0 when none.
    public var crashingAt: UInt64
    /// How many crashes were reported at ``crashingAt``.
    public var crashCount: UInt32
    /// Where the history it replayed when it first joined starts: 1 for the start of the bus, a later sequence when
    /// the log had been compacted past the start; 0 when it replayed none (it was on the bus from the start, or known
    /// before the coordinator kept histories).
    public var historyFrom: UInt64
    /// One more than the last dispatch of that history: every dispatch from ``historyBefore`` on, it ran as planned (or
    /// was told it skipped); 0 when it replayed none.
    public var historyBefore: UInt64

    /// A store status with the given fields.
    public init(
        name: String, dependsOn: [String], handlesAll: Bool, handles: [String], waitingFor: [String],
        divergedAt: UInt64, replicas: [Replica], snapshotSequence: UInt64 = 0, poisonedCount: UInt32 = 0,
        lastPoisoned: UInt64 = 0, crashingAt: UInt64 = 0, crashCount: UInt32 = 0, historyFrom: UInt64 = 0,
        historyBefore: UInt64 = 0
    ) {
        self.historyFrom = historyFrom
        self.historyBefore = historyBefore
        self.poisonedCount = poisonedCount
        self.lastPoisoned = lastPoisoned
        self.crashingAt = crashingAt
        self.crashCount = crashCount
        self.name = name
        self.dependsOn = dependsOn
        self.handlesAll = handlesAll
        self.handles = handles
        self.waitingFor = waitingFor
        self.divergedAt = divergedAt
        self.replicas = replicas
        self.snapshotSequence = snapshotSequence
    }
}

extension StoreStatus: WireItem {
    package init() {
        self.init(name: "", dependsOn: [], handlesAll: false, handles: [], waitingFor: [], divergedAt: 0, replicas: [])
    }

    package mutating func visit<V: WireVisitor>(_ visitor: inout V) throws(V.Failure) {
        try visitor.string(&name, "name")
        try visitor.list(&dependsOn, "dependsOn")
        try visitor.bool(&handlesAll, "handlesAll")
        try visitor.list(&handles, "handles")
        try visitor.list(&waitingFor, "waitingFor")
        try visitor.u64(&divergedAt, "divergedAt")
        try visitor.list(&replicas, "replicas")
        try visitor.u64(&snapshotSequence, "snapshotSequence")
        try visitor.u32(&poisonedCount, "poisonedCount")
        try visitor.u64(&lastPoisoned, "lastPoisoned")
        try visitor.u64(&crashingAt, "crashingAt")
        try visitor.u32(&crashCount, "crashCount")
        try visitor.u64(&historyFrom, "historyFrom")
        try visitor.u64(&historyBefore, "historyBefore")
    }
}

/// One node of the global waitFor graph, as GRAPH reports it.
public struct GraphNode: Sendable, Hashable {
    /// The store's name.
    public var name: String
    /// The stores it depends on (the graph's edges).
    public var dependsOn: [String]
    /// Whether it handles every action type.
    public var handlesAll: Bool
    /// The action types it handles, when `handlesAll` is false.
    public var handles: [String]
    /// How many live replicas it has.
    public var replicas: UInt16

    /// A node with the given fields.
    public init(name: String, dependsOn: [String], handlesAll: Bool, handles: [String], replicas: UInt16) {
        self.name = name
        self.dependsOn = dependsOn
        self.handlesAll = handlesAll
        self.handles = handles
        self.replicas = replicas
    }
}

extension GraphNode: WireItem {
    package init() { self.init(name: "", dependsOn: [], handlesAll: false, handles: [], replicas: 0) }

    package mutating func visit<V: WireVisitor>(_ visitor: inout V) throws(V.Failure) {
        try visitor.string(&name, "name")
        try visitor.list(&dependsOn, "dependsOn")
        try visitor.bool(&handlesAll, "handlesAll")
        try visitor.list(&handles, "handles")
        try visitor.u16(&replicas, "replicas")
    }
}

/// Throughput and latency lately, as STATUS reports them after its other fields. Rates are per second times 1,000
/// (so 0.5/s is 500), over the coordinator's last few seconds; percentiles are over its latest completed dispatches.
public struct DispatchFigures: Sendable, Hashable {
    /// Requests answered (RESULT or BATCH_RESULT sent) since the coordinator started.
    public var dispatchesTotal: UInt64
    /// Actions completed since the coordinator started (a batch counts each of its actions).
    public var actionsTotal: UInt64
    /// Requests answered per second, times 1,000.
    public var dispatchRateMilli: UInt64
    /// Actions completed per second, times 1,000.
    public var actionRateMilli: UInt64
    /// How many of the latest completed actions the percentiles below are over; 0 when none completed yet.
    public var latencySamples: UInt32
    /// The median time from an action's publication to its completion, in microseconds.
    public var latencyP50Micros: UInt64
    /// The 90th percentile, in microseconds.
    public var latencyP90Micros: UInt64
    /// The 99th percentile, in microseconds.
    public var latencyP99Micros: UInt64
    /// The slowest, in microseconds.
    public var latencyMaxMicros: UInt64

    /// All zero, as a coordinator that completed nothing reports.
    public init() {
        self.init(dispatchesTotal: 0, actionsTotal: 0, dispatchRateMilli: 0, actionRateMilli: 0, latencySamples: 0,
                  latencyP50Micros: 0, latencyP90Micros: 0, latencyP99Micros: 0, latencyMaxMicros: 0)
    }

    /// Figures with the given fields.
    public init(
        dispatchesTotal: UInt64, actionsTotal: UInt64, dispatchRateMilli: UInt64, actionRateMilli: UInt64,
        latencySamples: UInt32, latencyP50Micros: UInt64, latencyP90Micros: UInt64, latencyP99Micros: UInt64,
        latencyMaxMicros: UInt64
    ) {
        self.dispatchesTotal = dispatchesTotal
        self.actionsTotal = actionsTotal
        self.dispatchRateMilli = dispatchRateMilli
        self.actionRateMilli = actionRateMilli
        self.latencySamples = latencySamples
        self.latencyP50Micros = latencyP50Micros
        self.latencyP90Micros = latencyP90Micros
        self.latencyP99Micros = latencyP99Micros
        self.latencyMaxMicros = latencyMaxMicros
    }
}

extension DispatchFigures: WireItem {
    package mutating func visit<V: WireVisitor>(_ visitor: inout V) throws(V.Failure) {
        try visitor.u64(&dispatchesTotal, "dispatchesTotal")
        try visitor.u64(&actionsTotal, "actionsTotal")
        try visitor.u64(&dispatchRateMilli, "dispatchRateMilli")
        try visitor.u64(&actionRateMilli, "actionRateMilli")
        try visitor.u32(&latencySamples, "latencySamples")
        try visitor.u64(&latencyP50Micros, "latencyP50Micros")
        try visitor.u64(&latencyP90Micros, "latencyP90Micros")
        try visitor.u64(&latencyP99Micros, "latencyP99Micros")
        try visitor.u64(&latencyMaxMicros, "latencyMaxMicros")
    }
}
