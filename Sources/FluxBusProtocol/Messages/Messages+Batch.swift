// Batches: many actions in one request, acknowledged as a whole. DISPATCH_BATCH, BATCH_RESULT.
// Each action still gets its own sequence, ACTION, acknowledgements and COMPLETED; only the request and its answer
// are shared, and the coordinator may publish the batch's actions without waiting for each to complete.

extension Message {
    /// DISPATCH_BATCH (0x1A), client or worker → coordinator over DEALER: dispatch these actions in order, as one
    /// request.
    public struct DispatchBatch: Sendable, Hashable {
        /// Chosen by the requester, unique per request; a retry with the same id gets the original BATCH_RESULT.
        public var requestID: String
        /// The actions, in the order they run; at least one.
        public var actions: [BatchAction]

        /// A DISPATCH_BATCH with the given fields.
        public init(requestID: String, actions: [BatchAction]) {
            self.requestID = requestID
            self.actions = actions
        }
    }

    /// BATCH_RESULT (0x1B), coordinator → requester over ROUTER: every action of the batch completed.
    public struct BatchResult: Sendable, Hashable {
        /// The DISPATCH_BATCH's request id.
        public var requestID: String
        /// The epoch the batch completed under.
        public var epoch: UInt64
        /// The sequence of the batch's first action; the others follow it one by one.
        public var firstSequence: UInt64
        /// How many actions the batch held.
        public var count: UInt32
        /// Microseconds from publishing the first ACTION to completing the last.
        public var elapsedMicros: UInt64
        /// Every outcome that was not `ok`, with its action's sequence.
        public var failures: [BatchFailure]
        /// The last action's outcomes: each replica's status and digest once the batch completed.
        public var outcomes: [Outcome]

        /// A BATCH_RESULT with the given fields.
        public init(
            requestID: String, epoch: UInt64, firstSequence: UInt64, count: UInt32, elapsedMicros: UInt64,
            failures: [BatchFailure], outcomes: [Outcome]
        ) {
            self.requestID = requestID
            self.epoch = epoch
            self.firstSequence = firstSequence
            self.count = count
            self.elapsedMicros = elapsedMicros
            self.failures = failures
            self.outcomes = outcomes
        }

        /// The sequence of the batch's last action.
        public var lastSequence: UInt64 { firstSequence + UInt64(count) - 1 }
    }
}

/// One action of a DISPATCH_BATCH.
public struct BatchAction: Sendable, Hashable {
    /// The action's type.
    public var actionType: String
    /// The action's payload (JSON by convention).
    public var payload: [UInt8]
    /// The action's error, if it carries one.
    public var error: String?

    /// An action with the given fields.
    public init(actionType: String, payload: [UInt8], error: String? = nil) {
        self.actionType = actionType
        self.payload = payload
        self.error = error
    }
}

/// An outcome in a batch that was not `ok`.
public struct BatchFailure: Sendable, Hashable {
    /// The action's sequence.
    public var sequence: UInt64
    /// The replica's outcome.
    public var outcome: Outcome

    /// A failure with the given fields.
    public init(sequence: UInt64, outcome: Outcome) {
        self.sequence = sequence
        self.outcome = outcome
    }
}

extension Message.DispatchBatch: WireItem {
    package init() { self.init(requestID: "", actions: []) }

    package mutating func visit<V: WireVisitor>(_ visitor: inout V) throws(V.Failure) {
        try visitor.string(&requestID, "requestID")
        try visitor.list(&actions, "actions")
    }
}

extension Message.BatchResult: WireItem {
    package init() { self.init(requestID: "", epoch: 0, firstSequence: 0, count: 0, elapsedMicros: 0, failures: [], outcomes: []) }

    package mutating func visit<V: WireVisitor>(_ visitor: inout V) throws(V.Failure) {
        try visitor.string(&requestID, "requestID")
        try visitor.u64(&epoch, "epoch")
        try visitor.u64(&firstSequence, "firstSequence")
        try visitor.u32(&count, "count")
        try visitor.u64(&elapsedMicros, "elapsedMicros")
        try visitor.list(&failures, "failures")
        try visitor.list(&outcomes, "outcomes")
    }
}

extension BatchAction: WireItem {
    package init() { self.init(actionType: "", payload: []) }

    package mutating func visit<V: WireVisitor>(_ visitor: inout V) throws(V.Failure) {
        try visitor.string(&actionType, "actionType")
        try visitor.bytes(&payload, "payload")
        try visitor.optionalString(&error, "error")
    }
}

extension BatchFailure: WireItem {
    package init() { self.init(sequence: 0, outcome: Outcome()) }

    package mutating func visit<V: WireVisitor>(_ visitor: inout V) throws(V.Failure) {
        try visitor.u64(&sequence, "sequence")
        try outcome.visit(&visitor)
    }
}
