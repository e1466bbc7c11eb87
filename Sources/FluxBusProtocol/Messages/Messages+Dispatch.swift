// Running dispatches and catching up: ACTION, RELEASE, ACK, FETCH, REPLAY, SNAPSHOT.
// Each body's `visit` is its wire layout, field by field.

extension Message {
    /// ACTION (0x05), coordinator → workers on PUB (and re-sent directly over ROUTER):
    /// run this action; `plan` says which stores run it and what each waits for.
    public struct Action: Sendable, Hashable {
        /// The epoch it is published under.
        public var epoch: UInt64
        /// Its sequence number: exactly one more than the last completed dispatch.
        public var sequence: UInt64
        /// The action's type, such as `country-update`.
        public var actionType: String
        /// The action's payload (JSON by convention).
        public var payload: [UInt8]
        /// The action's error (Flux actions may carry one), if any.
        public var error: String?
        /// The stores that run it, each with the planned stores it waits for.
        public var plan: [PlanStep]
        /// The W3C `traceparent` of a traced dispatch, as its DISPATCH gave it; empty when untraced. Workers time a
        /// traced dispatch and report the times in their ACKs' `timings`.
        public var traceparent: String

        /// An ACTION with the given fields.
        public init(
            epoch: UInt64, sequence: UInt64, actionType: String, payload: [UInt8], error: String? = nil, plan: [PlanStep],
            traceparent: String = ""
        ) {
            self.epoch = epoch
            self.sequence = sequence
            self.actionType = actionType
            self.payload = payload
            self.error = error
            self.plan = plan
            self.traceparent = traceparent
        }
    }

    /// RELEASE (0x06), coordinator → worker over ROUTER: the outcomes and outputs of remote
    /// dependencies, for the stores of this worker that wait for them.
    public struct Release: Sendable, Hashable {
        /// The dispatch's epoch.
        public var epoch: UInt64
        /// The dispatch's sequence.
        public var sequence: UInt64
        /// The dependencies' recorded outcomes and outputs.
        public var outputs: [StoreOutput]

        /// A RELEASE with the given fields.
        public init(epoch: UInt64, sequence: UInt64, outputs: [StoreOutput]) {
            self.epoch = epoch
            self.sequence = sequence
            self.outputs = outputs
        }
    }

    /// ACK (0x07), worker → coordinator over DEALER: results of some or all of the worker's
    /// planned stores for one dispatch.
    public struct Ack: Sendable, Hashable {
        /// The dispatch's epoch.
        public var epoch: UInt64
        /// The dispatch's sequence.
        public var sequence: UInt64
        /// One result per store acknowledged.
        public var results: [StoreResult]
        /// For a traced ACTION, when each acknowledged store became ready, started and finished, and when this ACK
        /// left, on the worker's own clock; empty when the ACTION was not traced.
        public var timings: [StoreTiming]

        /// An ACK with the given fields.
        public init(epoch: UInt64, sequence: UInt64, results: [StoreResult], timings: [StoreTiming] = []) {
            self.epoch = epoch
            self.sequence = sequence
            self.results = results
            self.timings = timings
        }
    }

    /// FETCH (0x08), worker or client → coordinator over DEALER: send the completed
    /// dispatches `from...to` (and re-send the in-flight ACTION if it is in that range).
    public struct Fetch: Sendable, Hashable {
        /// The requester's epoch; 0 when a client does not know it.
        public var epoch: UInt64
        /// The first sequence wanted.
        public var from: UInt64
        /// The last sequence wanted, inclusive.
        public var to: UInt64

        /// A FETCH with the given fields.
        public init(epoch: UInt64, from: UInt64, to: UInt64) {
            self.epoch = epoch
            self.from = from
            self.to = to
        }
    }

    /// REPLAY (0x09), coordinator → requester over ROUTER: completed dispatches, in order,
    /// with their recorded outcomes and outputs.
    public struct Replay: Sendable, Hashable {
        /// The coordinator's current epoch.
        public var epoch: UInt64
        /// Consecutive completed dispatches, starting at the FETCH's `from`.
        public var entries: [ReplayEntry] {
            get { encodedEntries?.decoded() ?? decodedEntries }
            set {
                decodedEntries = newValue
                encodedEntries = nil
            }
        }
        /// The entries as a decoder reads them or a caller gives them; empty when they are encoded.
        private var decodedEntries: [ReplayEntry]
        /// The entries in wire layout, as the coordinator serves them from its log; the writer copies them as they are.
        package private(set) var encodedEntries: EncodedEntries?
        /// Whether this is the last message of the answer to one FETCH: nothing more comes for it, neither REPLAYs nor
        /// the ACTIONs in flight that the coordinator sends again before this one.
        public var isLast: Bool
        /// The poison marks of these entries, in sequence order: a replica of a marked store skips it there.
        public var poisoned: [PoisonMark]

        /// A REPLAY with the given fields; by default the whole answer.
        public init(epoch: UInt64, entries: [ReplayEntry], isLast: Bool = true, poisoned: [PoisonMark] = []) {
            self.epoch = epoch
            self.decodedEntries = entries
            self.isLast = isLast
            self.poisoned = poisoned
        }

        /// A REPLAY of entries already in wire layout.
        package init(epoch: UInt64, encoded: EncodedEntries, isLast: Bool = true, poisoned: [PoisonMark] = []) {
            self.init(epoch: epoch, entries: [], isLast: isLast, poisoned: poisoned)
            encodedEntries = encoded
        }

        /// How many entries it carries, without decoding them.
        public var entryCount: Int { encodedEntries?.count ?? decodedEntries.count }

        // Equal by what they say, however the entries are held.
        public static func == (lhs: Self, rhs: Self) -> Bool {
            lhs.epoch == rhs.epoch && lhs.isLast == rhs.isLast && lhs.poisoned == rhs.poisoned && lhs.entries == rhs.entries
        }

        public func hash(into hasher: inout Hasher) {
            hasher.combine(epoch)
            hasher.combine(entries)
            hasher.combine(isLast)
            hasher.combine(poisoned)
        }
    }

    /// SNAPSHOT (0x0C), coordinator → worker over ROUTER: install this state of `store` as of
    /// `sequence`, then catch up from `sequence + 1`. It opens a transfer: `state` holds the state's first bytes, and
    /// when they are fewer than `size` the worker PULLs the rest under `transfer` (docs/PROTOCOL.md, "Transfers").
    public struct Snapshot: Sendable, Hashable {
        /// The coordinator's current epoch.
        public var epoch: UInt64
        /// The store whose state this is.
        public var store: String
        /// The last sequence applied to this state.
        public var sequence: UInt64
        /// The store's state digest, as the replica that gave the state reported it in its ACKs.
        public var digest: UInt64
        /// The state's whole size in bytes.
        public var size: UInt64
        /// FNV-1a 64 of all `size` bytes: what the receiver checks the reassembled bytes against.
        public var checksum: UInt64
        /// The log chain at `sequence` (docs/PROTOCOL.md, Appendix D), so that a worker starting from this state can
        /// still prove its history when it joins again; 0 when the coordinator does not know it. Version 6.
        public var chain: UInt64
        /// The id the worker PULLs the rest under.
        public var transfer: String
        /// The first bytes of the store's canonical state (JSON by convention); all of it when `size` fits, and once a
        /// receiver (such as `BusClient`) has reassembled it.
        public var state: [UInt8]

        /// A SNAPSHOT with the given fields.
        public init(
            epoch: UInt64, store: String, sequence: UInt64, digest: UInt64, size: UInt64, checksum: UInt64,
            chain: UInt64 = 0, transfer: String, state: [UInt8]
        ) {
            self.epoch = epoch
            self.store = store
            self.sequence = sequence
            self.digest = digest
            self.size = size
            self.checksum = checksum
            self.chain = chain
            self.transfer = transfer
            self.state = state
        }

        /// A SNAPSHOT that carries the whole of `state` inline.
        public init(epoch: UInt64, store: String, sequence: UInt64, digest: UInt64, chain: UInt64 = 0, state: [UInt8]) {
            self.init(
                epoch: epoch, store: store, sequence: sequence, digest: digest, size: UInt64(state.count),
                checksum: StateDigest.fnv1a64(state), chain: chain, transfer: "", state: state)
        }
    }
}

extension Message.Action: WireItem {
    package init() { self.init(epoch: 0, sequence: 0, actionType: "", payload: [], plan: []) }

    package mutating func visit<V: WireVisitor>(_ visitor: inout V) throws(V.Failure) {
        try visitor.u64(&epoch, "epoch")
        try visitor.u64(&sequence, "sequence")
        try visitor.string(&actionType, "actionType")
        try visitor.bytes(&payload, "payload")
        try visitor.optionalString(&error, "error")
        try visitor.list(&plan, "plan")
        try visitor.string(&traceparent, "traceparent")
    }
}

extension Message.Release: WireItem {
    package init() { self.init(epoch: 0, sequence: 0, outputs: []) }

    package mutating func visit<V: WireVisitor>(_ visitor: inout V) throws(V.Failure) {
        try visitor.u64(&epoch, "epoch")
        try visitor.u64(&sequence, "sequence")
        try visitor.list(&outputs, "outputs")
    }
}

extension Message.Ack: WireItem {
    package init() { self.init(epoch: 0, sequence: 0, results: []) }

    package mutating func visit<V: WireVisitor>(_ visitor: inout V) throws(V.Failure) {
        try visitor.u64(&epoch, "epoch")
        try visitor.u64(&sequence, "sequence")
        try visitor.list(&results, "results")
        try visitor.list(&timings, "timings")
    }
}

extension Message.Fetch: WireItem {
    package init() { self.init(epoch: 0, from: 0, to: 0) }

    package mutating func visit<V: WireVisitor>(_ visitor: inout V) throws(V.Failure) {
        try visitor.u64(&epoch, "epoch")
        try visitor.u64(&from, "from")
        try visitor.u64(&to, "to")
    }
}

extension Message.Replay: WireItem {
    package init() { self.init(epoch: 0, entries: []) }

    package mutating func visit<V: WireVisitor>(_ visitor: inout V) throws(V.Failure) {
        try visitor.u64(&epoch, "epoch")
        try visitor.entries(&decodedEntries, encoded: encodedEntries, "entries")
        try visitor.bool(&isLast, "last")
        try visitor.list(&poisoned, "poisoned")
    }
}

extension Message.Snapshot: WireItem {
    package init() { self.init(epoch: 0, store: "", sequence: 0, digest: 0, size: 0, checksum: 0, transfer: "", state: []) }

    package mutating func visit<V: WireVisitor>(_ visitor: inout V) throws(V.Failure) {
        try visitor.u64(&epoch, "epoch")
        try visitor.string(&store, "store")
        try visitor.u64(&sequence, "sequence")
        try visitor.u64(&digest, "digest")
        try visitor.u64(&size, "size")
        try visitor.u64(&checksum, "checksum")
        try visitor.u64(&chain, "chain")
        try visitor.string(&transfer, "transfer")
        try visitor.bytes(&state, "state")
    }
}
