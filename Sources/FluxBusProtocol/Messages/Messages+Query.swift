// Looking at the bus: STATUS_REQUEST, STATUS, GRAPH_REQUEST, GRAPH, STATE_REQUEST, STATE.
// Each body's `visit` is its wire layout, field by field.

extension Message {
    /// STATUS_REQUEST (0x13), client → coordinator over DEALER: describe the bus.
    public struct StatusRequest: Sendable, Hashable {
        /// Chosen by the requester; echoed in the answer.
        public var requestID: String

        /// A STATUS_REQUEST with the given request id.
        public init(requestID: String) {
            self.requestID = requestID
        }
    }

    /// STATUS (0x14), coordinator → client over ROUTER: the bus's workers and stores.
    public struct Status: Sendable, Hashable {
        /// The STATUS_REQUEST's request id.
        public var requestID: String
        /// The coordinator's current epoch.
        public var epoch: UInt64
        /// The last completed sequence.
        public var sequence: UInt64
        /// Dispatches waiting behind the one in flight.
        public var queueLength: UInt32
        /// The coordinator's publish endpoint.
        public var publishEndpoint: String
        /// Every worker the coordinator knows.
        public var workers: [WorkerStatus]
        /// Every store the coordinator knows.
        public var stores: [StoreStatus]
        /// Where the coordinator's log is, or empty when it is in memory.
        public var logPath: String
        /// How the log syncs: `always`, `batch` or `off`.
        public var logSync: String
        /// The oldest sequence the log still holds; older ones were compacted into snapshots.
        public var logOldest: UInt64
        /// The last sequence logged (queued dispatches included).
        public var logLast: UInt64
        /// How many completed dispatches the log keeps at least.
        public var retain: UInt64
        /// Throughput and latency lately, for `status` and `top`.
        public var figures: DispatchFigures

        /// A STATUS with the given fields.
        public init(
            requestID: String, epoch: UInt64, sequence: UInt64, queueLength: UInt32, publishEndpoint: String,
            workers: [WorkerStatus], stores: [StoreStatus], logPath: String = "", logSync: String = "",
            logOldest: UInt64 = 0, logLast: UInt64 = 0, retain: UInt64 = 0, figures: DispatchFigures = .init()
        ) {
            self.requestID = requestID
            self.epoch = epoch
            self.sequence = sequence
            self.queueLength = queueLength
            self.publishEndpoint = publishEndpoint
            self.workers = workers
            self.stores = stores
            self.logPath = logPath
            self.logSync = logSync
            self.logOldest = logOldest
            self.logLast = logLast
            self.retain = retain
            self.figures = figures
        }
    }

    /// GRAPH_REQUEST (0x15), client → coordinator over DEALER: describe the waitFor graph.
    public struct GraphRequest: Sendable, Hashable {
        /// Chosen by the requester; echoed in the answer.
        public var requestID: String

        /// A GRAPH_REQUEST with the given request id.
        public init(requestID: String) {
            self.requestID = requestID
        }
    }

    /// GRAPH (0x16), coordinator → client over ROUTER: the waitFor graph.
    public struct Graph: Sendable, Hashable {
        /// The GRAPH_REQUEST's request id.
        public var requestID: String
        /// Every store, with its edges.
        public var stores: [GraphNode]

        /// A GRAPH with the given fields.
        public init(requestID: String, stores: [GraphNode]) {
            self.requestID = requestID
            self.stores = stores
        }
    }

    /// STATE_REQUEST (0x17), client → coordinator, and coordinator → worker, over ROUTER/DEALER:
    /// send the state of one store.
    public struct StateRequest: Sendable, Hashable {
        /// Chosen by the requester; echoed in the answer. The coordinator forwards with its own id.
        public var requestID: String
        /// The store wanted.
        public var store: String

        /// A STATE_REQUEST with the given fields.
        public init(requestID: String, store: String) {
            self.requestID = requestID
            self.store = store
        }
    }

    /// STATE (0x18), worker → coordinator, and coordinator → client: one replica's state of a store. It opens a
    /// transfer under `requestID`: `state` holds the state's first bytes, and when they are fewer than `size` the
    /// receiver PULLs the rest (docs/PROTOCOL.md, "Transfers").
    public struct State: Sendable, Hashable {
        /// The STATE_REQUEST's request id; also the transfer's id.
        public var requestID: String
        /// The store.
        public var store: String
        /// The worker whose replica this is.
        public var worker: String
        /// The last sequence applied to this state.
        public var sequence: UInt64
        /// The store's state digest, as the replica reports it in its ACKs.
        public var digest: UInt64
        /// The state's whole size in bytes.
        public var size: UInt64
        /// FNV-1a 64 of all `size` bytes: what the receiver checks the reassembled bytes against.
        public var checksum: UInt64
        /// The first bytes of the store's canonical state (JSON by convention); all of it when `size` fits, and once a
        /// receiver (such as `BusClient`) has reassembled it.
        public var state: [UInt8]

        /// A STATE with the given fields.
        public init(
            requestID: String, store: String, worker: String, sequence: UInt64, digest: UInt64, size: UInt64,
            checksum: UInt64, state: [UInt8]
        ) {
            self.requestID = requestID
            self.store = store
            self.worker = worker
            self.sequence = sequence
            self.digest = digest
            self.size = size
            self.checksum = checksum
            self.state = state
        }

        /// A STATE that carries the whole of `state` inline.
        public init(requestID: String, store: String, worker: String, sequence: UInt64, digest: UInt64, state: [UInt8]) {
            self.init(
                requestID: requestID, store: store, worker: worker, sequence: sequence, digest: digest,
                size: UInt64(state.count), checksum: StateDigest.fnv1a64(state), state: state)
        }
    }
}

extension Message.StatusRequest: WireItem {
    package init() { self.init(requestID: "") }

    package mutating func visit<V: WireVisitor>(_ visitor: inout V) throws(V.Failure) {
        try visitor.string(&requestID, "requestID")
    }
}

extension Message.Status: WireItem {
    package init() {
        self.init(requestID: "", epoch: 0, sequence: 0, queueLength: 0, publishEndpoint: "", workers: [], stores: [])
    }

    package mutating func visit<V: WireVisitor>(_ visitor: inout V) throws(V.Failure) {
        try visitor.string(&requestID, "requestID")
        try visitor.u64(&epoch, "epoch")
        try visitor.u64(&sequence, "sequence")
        try visitor.u32(&queueLength, "queueLength")
        try visitor.string(&publishEndpoint, "publishEndpoint")
        try visitor.list(&workers, "workers")
        try visitor.list(&stores, "stores")
        try visitor.string(&logPath, "logPath")
        try visitor.string(&logSync, "logSync")
        try visitor.u64(&logOldest, "logOldest")
        try visitor.u64(&logLast, "logLast")
        try visitor.u64(&retain, "retain")
        // Appended after `retain`: flat fields, so the layout stays one run of fields.
        try figures.visit(&visitor)
    }
}

extension Message.GraphRequest: WireItem {
    package init() { self.init(requestID: "") }

    package mutating func visit<V: WireVisitor>(_ visitor: inout V) throws(V.Failure) {
        try visitor.string(&requestID, "requestID")
    }
}

extension Message.Graph: WireItem {
    package init() { self.init(requestID: "", stores: []) }

    package mutating func visit<V: WireVisitor>(_ visitor: inout V) throws(V.Failure) {
        try visitor.string(&requestID, "requestID")
        try visitor.list(&stores, "stores")
    }
}

extension Message.StateRequest: WireItem {
    package init() { self.init(requestID: "", store: "") }

    package mutating func visit<V: WireVisitor>(_ visitor: inout V) throws(V.Failure) {
        try visitor.string(&requestID, "requestID")
        try visitor.string(&store, "store")
    }
}

extension Message.State: WireItem {
    package init() { self.init(requestID: "", store: "", worker: "", sequence: 0, digest: 0, size: 0, checksum: 0, state: []) }

    package mutating func visit<V: WireVisitor>(_ visitor: inout V) throws(V.Failure) {
        try visitor.string(&requestID, "requestID")
        try visitor.string(&store, "store")
        try visitor.string(&worker, "worker")
        try visitor.u64(&sequence, "sequence")
        try visitor.u64(&digest, "digest")
        try visitor.u64(&size, "size")
        try visitor.u64(&checksum, "checksum")
        try visitor.bytes(&state, "state")
    }
}
