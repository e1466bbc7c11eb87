// Runs: consecutive messages alike but for a few fields, sent as one. ACTIONS, ACKS, COMPLETIONS.
// A run stands for exactly the messages it lists, in order, as a BUNDLE of them would: the receiver handles them one by
// one (``Codec/decodeAll(_:)`` hands them over so). What a run saves is what a batch repeats in every message: the
// plan, the store names, the outcomes, and each message's own framing and decoding.

extension Message {
    /// ACTIONS (0x1F), coordinator → workers on PUB (and re-sent directly over ROUTER): the ACTIONs of consecutive
    /// sequences from `firstSequence`, one per entry, all with this epoch, action type, plan and traceparent.
    public struct Actions: Sendable, Hashable {
        /// The epoch they are published under.
        public var epoch: UInt64
        /// The first entry's sequence; each entry after it has the next.
        public var firstSequence: UInt64
        /// Every entry's action type.
        public var actionType: String
        /// Every entry's plan.
        public var plan: [PlanStep]
        /// Every entry's `traceparent`: empty, since a traced dispatch is alone in its request.
        public var traceparent: String
        /// Each ACTION's own payload and error, in sequence order; at least one.
        public var entries: [ActionEntry]

        /// An ACTIONS with the given fields.
        public init(
            epoch: UInt64, firstSequence: UInt64, actionType: String, plan: [PlanStep], traceparent: String = "",
            entries: [ActionEntry]
        ) {
            self.epoch = epoch
            self.firstSequence = firstSequence
            self.actionType = actionType
            self.plan = plan
            self.traceparent = traceparent
            self.entries = entries
        }
    }

    /// ACKS (0x20), worker → coordinator over DEALER: the ACKs of `count` consecutive sequences from `firstSequence`,
    /// each with `results` but for their digests, which ``digests`` holds, and no timings.
    public struct Acks: Sendable, Hashable {
        /// The dispatches' epoch.
        public var epoch: UInt64
        /// The first ACK's sequence; each one after it has the next.
        public var firstSequence: UInt64
        /// How many ACKs: at least one.
        public var count: UInt32
        /// Every ACK's results, each with digest 0: at least one.
        public var results: [StoreResult]
        /// The digests, 8 bytes each, big-endian: the digest of result `j` of ACK `i` is digest `i × results.count + j`.
        public var digests: [UInt8]

        /// An ACKS with the given fields.
        public init(epoch: UInt64, firstSequence: UInt64, count: UInt32, results: [StoreResult], digests: [UInt8]) {
            self.epoch = epoch
            self.firstSequence = firstSequence
            self.count = count
            self.results = results
            self.digests = digests
        }
    }

    /// COMPLETIONS (0x21), coordinator → all on PUB: the COMPLETEDs of `count` consecutive sequences from
    /// `firstSequence`, all with this epoch, action type and `outcomes` but for the outcomes' digests and each one's
    /// elapsed time.
    public struct Completions: Sendable, Hashable {
        /// The epoch they completed under.
        public var epoch: UInt64
        /// The first COMPLETED's sequence; each one after it has the next.
        public var firstSequence: UInt64
        /// How many COMPLETEDs: at least one.
        public var count: UInt32
        /// Every COMPLETED's action type.
        public var actionType: String
        /// Every COMPLETED's outcomes, each with digest 0 (none, for an action nothing handled).
        public var outcomes: [Outcome]
        /// Each COMPLETED's `elapsedMicros`, 8 bytes each, big-endian.
        public var elapsedMicros: [UInt8]
        /// The digests, 8 bytes each, big-endian: the digest of outcome `j` of COMPLETED `i` is digest
        /// `i × outcomes.count + j`.
        public var digests: [UInt8]

        /// A COMPLETIONS with the given fields.
        public init(
            epoch: UInt64, firstSequence: UInt64, count: UInt32, actionType: String, outcomes: [Outcome],
            elapsedMicros: [UInt8], digests: [UInt8]
        ) {
            self.epoch = epoch
            self.firstSequence = firstSequence
            self.count = count
            self.actionType = actionType
            self.outcomes = outcomes
            self.elapsedMicros = elapsedMicros
            self.digests = digests
        }
    }
}

/// One ACTION of an ACTIONS: what is its own.
public struct ActionEntry: Sendable, Hashable {
    /// The action's payload.
    public var payload: [UInt8]
    /// The action's error, if it carries one.
    public var error: String?

    /// An entry with the given fields.
    public init(payload: [UInt8], error: String? = nil) {
        self.payload = payload
        self.error = error
    }
}

extension Message.Actions: WireItem {
    package init() { self.init(epoch: 0, firstSequence: 0, actionType: "", plan: [], entries: []) }

    package mutating func visit<V: WireVisitor>(_ visitor: inout V) throws(V.Failure) {
        try visitor.u64(&epoch, "epoch")
        try visitor.u64(&firstSequence, "firstSequence")
        try visitor.string(&actionType, "actionType")
        try visitor.list(&plan, "plan")
        try visitor.string(&traceparent, "traceparent")
        try visitor.list(&entries, "entries")
    }
}

extension Message.Acks: WireItem {
    package init() { self.init(epoch: 0, firstSequence: 0, count: 0, results: [], digests: []) }

    package mutating func visit<V: WireVisitor>(_ visitor: inout V) throws(V.Failure) {
        try visitor.u64(&epoch, "epoch")
        try visitor.u64(&firstSequence, "firstSequence")
        try visitor.u32(&count, "count")
        try visitor.list(&results, "results")
        try visitor.bytes(&digests, "digests")
    }
}

extension Message.Completions: WireItem {
    package init() {
        self.init(epoch: 0, firstSequence: 0, count: 0, actionType: "", outcomes: [], elapsedMicros: [], digests: [])
    }

    package mutating func visit<V: WireVisitor>(_ visitor: inout V) throws(V.Failure) {
        try visitor.u64(&epoch, "epoch")
        try visitor.u64(&firstSequence, "firstSequence")
        try visitor.u32(&count, "count")
        try visitor.string(&actionType, "actionType")
        try visitor.list(&outcomes, "outcomes")
        try visitor.bytes(&elapsedMicros, "elapsedMicros")
        try visitor.bytes(&digests, "digests")
    }
}

extension ActionEntry: WireItem {
    package init() { self.init(payload: []) }

    package mutating func visit<V: WireVisitor>(_ visitor: inout V) throws(V.Failure) {
        try visitor.bytes(&payload, "payload")
        try visitor.optionalString(&error, "error")
    }
}
