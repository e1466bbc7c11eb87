// The list items of the worker messages. Each type's `visit` is its wire layout, field by field.

/// One store a worker hosts, as HELLO declares it.
public struct StoreDeclaration: Sendable, Hashable {
    /// The store's name, unique across the bus.
    public var name: String
    /// The stores this one waits for (Flux `waitFor`), by name.
    public var dependsOn: [String]
    /// Whether the store handles every action type; `handles` is then empty.
    public var handlesAll: Bool
    /// The action types the store handles, when `handlesAll` is false.
    public var handles: [String]
    /// The last sequence this replica applied; 0 when it holds no state.
    public var lastApplied: UInt64

    /// A declaration with the given fields.
    public init(name: String, dependsOn: [String] = [], handlesAll: Bool, handles: [String] = [], lastApplied: UInt64 = 0) {
        self.name = name
        self.dependsOn = dependsOn
        self.handlesAll = handlesAll
        self.handles = handles
        self.lastApplied = lastApplied
    }
}

extension StoreDeclaration: WireItem {
    package init() { self.init(name: "", handlesAll: false) }

    package mutating func visit<V: WireVisitor>(_ visitor: inout V) throws(V.Failure) {
        try visitor.string(&name, "name")
        try visitor.list(&dependsOn, "dependsOn")
        try visitor.bool(&handlesAll, "handlesAll")
        try visitor.list(&handles, "handles")
        try visitor.u64(&lastApplied, "lastApplied")
    }
}

/// One store of a dispatch's plan and the planned stores it must wait for.
public struct PlanStep: Sendable, Hashable {
    /// The store that runs the action.
    public var store: String
    /// The planned stores whose outcome this store needs first.
    public var waitsFor: [String]

    /// A step with the given fields.
    public init(store: String, waitsFor: [String] = []) {
        self.store = store
        self.waitsFor = waitsFor
    }
}

extension PlanStep: WireItem {
    package init() { self.init(store: "") }

    package mutating func visit<V: WireVisitor>(_ visitor: inout V) throws(V.Failure) {
        try visitor.string(&store, "store")
        try visitor.list(&waitsFor, "waitsFor")
    }
}

/// The recorded outcome and output of one store for one dispatch, as dependents receive it.
public struct StoreOutput: Sendable, Hashable {
    /// The store that ran.
    public var store: String
    /// How it fared.
    public var status: OutcomeStatus
    /// The error text when it failed, the reason when it was skipped or lost; otherwise empty.
    public var message: String
    /// The store's published output (JSON by convention), if it published one.
    public var output: [UInt8]?

    /// An output record with the given fields.
    public init(store: String, status: OutcomeStatus, message: String = "", output: [UInt8]? = nil) {
        self.store = store
        self.status = status
        self.message = message
        self.output = output
    }
}

extension StoreOutput: WireItem {
    package init() { self.init(store: "", status: .ok) }

    package mutating func visit<V: WireVisitor>(_ visitor: inout V) throws(V.Failure) {
        try visitor.string(&store, "store")
        try visitor.enumeration(&status, "status")
        try visitor.string(&message, "message")
        try visitor.optionalBytes(&output, "output")
    }
}

/// One replica's acknowledgement of one store's handling of a dispatch.
public struct StoreResult: Sendable, Hashable {
    /// The store that ran (or was skipped).
    public var store: String
    /// How it fared.
    public var status: OutcomeStatus
    /// The error text when it failed, the reason when it was skipped; otherwise empty.
    public var message: String
    /// The store's published output (JSON by convention), if it published one.
    public var output: [UInt8]?
    /// FNV-1a 64 of the store's canonical state bytes after the dispatch (see ``StateDigest``).
    public var digest: UInt64
    /// What the store read of its dependencies' outcomes (see ``ReadDigest``); 0 when it waited for none, or the
    /// worker does not say. Protocol version 6.
    public var readDigest: UInt64

    /// A result with the given fields.
    public init(
        store: String, status: OutcomeStatus, message: String = "", output: [UInt8]? = nil, digest: UInt64,
        readDigest: UInt64 = ReadDigest.none
    ) {
        self.store = store
        self.status = status
        self.message = message
        self.output = output
        self.digest = digest
        self.readDigest = readDigest
    }
}

extension StoreResult: WireItem {
    package init() { self.init(store: "", status: .ok, digest: 0) }

    package mutating func visit<V: WireVisitor>(_ visitor: inout V) throws(V.Failure) {
        try visitor.string(&store, "store")
        try visitor.enumeration(&status, "status")
        try visitor.string(&message, "message")
        try visitor.optionalBytes(&output, "output")
        try visitor.u64(&digest, "digest")
        try visitor.u64(&readDigest, "readDigest")
    }
}

/// A completed dispatch as the history holds it: the action, its plan, and its recorded outputs.
public struct ReplayEntry: Sendable, Hashable {
    /// The epoch the dispatch was published under.
    public var epoch: UInt64
    /// The dispatch's sequence number.
    public var sequence: UInt64
    /// The action's type.
    public var actionType: String
    /// The action's payload (JSON by convention).
    public var payload: [UInt8]
    /// The action's error, if it carries one.
    public var error: String?
    /// Which stores ran it and what each waited for.
    public var plan: [PlanStep]
    /// The recorded outcome and output of every planned store.
    public var outputs: [StoreOutput]

    /// An entry with the given fields.
    public init(
        epoch: UInt64, sequence: UInt64, actionType: String, payload: [UInt8], error: String? = nil,
        plan: [PlanStep], outputs: [StoreOutput]
    ) {
        self.epoch = epoch
        self.sequence = sequence
        self.actionType = actionType
        self.payload = payload
        self.error = error
        self.plan = plan
        self.outputs = outputs
    }
}

extension ReplayEntry: WireItem {
    package init() { self.init(epoch: 0, sequence: 0, actionType: "", payload: [], plan: [], outputs: []) }

    package mutating func visit<V: WireVisitor>(_ visitor: inout V) throws(V.Failure) {
        try visitor.u64(&epoch, "epoch")
        try visitor.u64(&sequence, "sequence")
        try visitor.string(&actionType, "actionType")
        try visitor.bytes(&payload, "payload")
        try visitor.optionalString(&error, "error")
        try visitor.repeatingList(&plan, "plan")
        try visitor.repeatingList(&outputs, "outputs")
    }
}

/// One replica's outcome in a RESULT or COMPLETED.
public struct Outcome: Sendable, Hashable {
    /// The store.
    public var store: String
    /// The worker hosting the replica; empty when the store had no live replica.
    public var worker: String
    /// How the replica fared.
    public var status: OutcomeStatus
    /// The error text or reason; empty when ok.
    public var message: String
    /// The replica's state digest after the dispatch.
    public var digest: UInt64

    /// An outcome with the given fields.
    public init(store: String, worker: String, status: OutcomeStatus, message: String = "", digest: UInt64) {
        self.store = store
        self.worker = worker
        self.status = status
        self.message = message
        self.digest = digest
    }
}

extension Outcome: WireItem {
    package init() { self.init(store: "", worker: "", status: .ok, digest: 0) }

    package mutating func visit<V: WireVisitor>(_ visitor: inout V) throws(V.Failure) {
        try visitor.string(&store, "store")
        try visitor.string(&worker, "worker")
        try visitor.enumeration(&status, "status")
        try visitor.string(&message, "message")
        try visitor.u64(&digest, "digest")
    }
}
