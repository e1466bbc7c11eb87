import FluxBusProtocol

/// How a ``Coordinator`` listens and paces the bus. Every field has a documented default.
public struct CoordinatorConfiguration: Sendable {
    /// Where the ROUTER for workers and clients binds. `tcp://127.0.0.1:*` picks a free port.
    public var controlEndpoint: String
    /// Where the PUB for the action stream binds.
    public var publishEndpoint: String
    /// More endpoints for the ROUTER and the PUB to bind, for example an `ipc://` path beside a TCP address.
    public var extraControlEndpoints: [String] = []
    public var extraPublishEndpoints: [String] = []
    /// The largest action payload accepted; a larger DISPATCH is refused with a clear error.
    public var maxPayloadBytes = 1 << 20
    /// The largest frame libzmq accepts from a peer (`ZMQ_MAXMSGSIZE`, applied per frame); a peer that sends more is
    /// disconnected without the coordinator seeing the message. Twice the protocol's 16 MiB frame limit by default,
    /// so that a request over the protocol's limits still reaches the coordinator, which answers it with an ERROR
    /// naming the limit; the cost is that one message may take up to this much memory before it is refused.
    public var maxMessageBytes = 2 * Limits.default.maxFrameBytes
    /// How many connections may wait for one request id in flight or queued: the first sender and those that sent
    /// the same id again meanwhile. Each gets the answer once; one more is refused at once with ERROR code 1 (busy).
    public var maxWaitersPerRequest = 1_024
    /// Whether a dispatch that no store can run (none handles its type, or those that do wait for a store nobody
    /// hosts) is refused with ERROR code 11 rather than logged. Off by default: such a dispatch is logged and
    /// answered without outcomes, which clients show as `unhandled`, so an action sent before the worker that
    /// handles it has joined is kept in the history rather than lost.
    public var refuseUnhandled = false
    /// Malformed messages one peer may send per second; past that it is quarantined: everything it sends is dropped
    /// unread (and counted) for `quarantine`.
    public var maxMalformedPerSecond = 100
    public var quarantine: Duration = .seconds(60)
    /// CURVE encryption and the keys admitted; nil for plain text.
    public var security: CoordinatorSecurity?
    /// At most this many stores per worker, and this many workers; a HELLO beyond either is refused (code 8).
    /// They bound the work one HELLO can cause on the coordinator's thread.
    public var maxStoresPerWorker = 256
    public var maxWorkers = 1_024
    /// How many crashes of a store's handler at one action (reported by restarted workers) mark that action poisoned
    /// for the store, so that its replicas skip it instead of crashing on it forever; 0 never marks one.
    public var poisonAfter = 3
    /// What a store runs with when a store it waits for has no live replica (or every replica was lost).
    public var lostDependencyPolicy: LostDependencyPolicy = .skip
    /// The publish endpoint told to workers in WELCOME, when it differs from what was bound (for example, bound to
    /// `tcp://0.0.0.0:7400` and reached as `tcp://10.0.0.5:7400`). By default, the bound endpoint.
    public var advertisedPublishEndpoint: String?
    /// A graph pinned up front; workers must match it.
    public var topology: Topology?
    /// How long a dispatch waits for acknowledgements before silent replicas are marked lost.
    public var ackTimeout: Duration
    /// How long a state request (a client's read, a snapshot for compaction) waits for the replica's first answer
    /// (`--state-timeout`): the replica encodes the whole state first, which may take far longer than `ackTimeout`.
    /// A replica lost or gone meanwhile ends the wait at once; once chunks flow, each must follow within `ackTimeout`.
    public var stateTimeout: Duration = BusDefaults.stateTimeout
    /// How often the coordinator beats when idle, and how often it expects workers to.
    public var heartbeatInterval: Duration
    /// How many heartbeat intervals of silence make a worker lost.
    public var livenessIntervals: Int
    /// How many actions may wait behind the request in flight; beyond that, requests are refused as busy.
    public var queueLimit: Int
    /// The most dispatches in flight at once (`--max-in-flight`): a request starts while others are in flight when the
    /// dispatches not yet completed, with its own, stay within it; one that does not fit starts alone. Workers apply
    /// every sequence in order whatever it is; 1 starts each request only when the one before has been answered, as
    /// DESIGN.md's lock step had it. At most 4,096; a worker remembers more acknowledgements than that, to send again
    /// (`BusDefaults.largestBatch`: a batch larger than this starts alone, all of it in flight).
    public var maxInFlight = 4_096
    /// The most actions one DISPATCH_BATCH may hold. The worker keeps at most 10,000 actions that arrive ahead of
    /// their turn, so a batch stays below that.
    public var maxBatch = 4_096
    /// Where the durable log lives (`log.sqlite` inside it), or nil to keep the log in memory: then a restarted
    /// coordinator starts a new bus, and workers that applied the old one are refused.
    public var dataDirectory: String?
    /// How the log's commits reach the disk.
    public var sync: LogSync = .always
    /// Start from what the log holds even when it holds less than its data directory had committed (`--new-bus`):
    /// a new bus when it is empty. Without it such a log stops the coordinator at start (docs/OPERATIONS.md, 11).
    public var newBus = false
    /// How many completed dispatches the log keeps at least. Beyond that, once every store has a snapshot, older
    /// entries are dropped: a replica further behind starts from its store's snapshot.
    public var retain: Int
    /// After a restart, how long dispatching waits for the stores of the previous run to have a live replica again,
    /// so that actions are not recorded as lost only because workers had not rejoined yet.
    public var recoveryGrace: Duration = .seconds(10)
    /// How many request ids are remembered, so that a retried request gets its original result.
    public var rememberedRequests: Int
    /// At most this many entries go in one REPLAY message.
    public var replayBatch: Int
    /// How long after a dispatch starts the ACTION is first re-sent to silent replicas; the gap then doubles.
    public var firstResend: Duration
    /// Size limits for every decoded message.
    public var limits: Limits
    /// How often the coordinator checks liveness, deadlines and re-sends.
    public var tickInterval: Duration
    /// How long a COMPLETED may wait for the next publication, an ACTION usually, to go out with it in one BUNDLE
    /// (`--completed-window-ms`). A lock-step client's next dispatch comes within it, so each worker wakes once per
    /// dispatch instead of twice; readers of the stream see a COMPLETED up to this much later. Zero publishes each
    /// at once.
    public var completedWindow: Duration = .milliseconds(1)
    /// The bytes a SNAPSHOT carries inline and each PULL for a streamed state asks for: 1 MiB by default. Must fit in
    /// a message (`Limits.maxBytesField`, in FluxBusProtocol).
    public var transferChunkBytes = TransferWindow.defaultChunkSize
    /// Where to serve Prometheus's `GET /metrics` (`--metrics-listen`); nil, the default, serves none.
    public var metricsListen: MetricsEndpoint?

    public init(
        controlEndpoint: String = BusDefaults.controlEndpoint,
        publishEndpoint: String = BusDefaults.publishEndpoint,
        advertisedPublishEndpoint: String? = nil,
        topology: Topology? = nil,
        ackTimeout: Duration = BusDefaults.ackTimeout,
        heartbeatInterval: Duration = BusDefaults.heartbeatInterval,
        livenessIntervals: Int = BusDefaults.livenessIntervals,
        queueLimit: Int = BusDefaults.queueLimit,
        retain: Int = BusDefaults.retain,
        rememberedRequests: Int = 100_000,
        replayBatch: Int = 1_000,
        firstResend: Duration = .milliseconds(200),
        limits: Limits = .default,
        tickInterval: Duration = .milliseconds(50)
    ) {
        self.controlEndpoint = controlEndpoint
        self.publishEndpoint = publishEndpoint
        self.advertisedPublishEndpoint = advertisedPublishEndpoint
        self.topology = topology
        self.ackTimeout = ackTimeout
        self.heartbeatInterval = heartbeatInterval
        self.livenessIntervals = livenessIntervals
        self.queueLimit = queueLimit
        self.retain = retain
        self.rememberedRequests = rememberedRequests
        self.replayBatch = replayBatch
        self.firstResend = firstResend
        self.limits = limits
        self.tickInterval = tickInterval
    }
}

/// What the stores waiting for a lost store do.
public enum LostDependencyPolicy: String, Sendable, CaseIterable {
    /// They are skipped, and reported as skipped: a store never runs without the output it waits for. The default.
    case skip
    /// They run without its output (`context.output(of:)` returns nil), as if it had not handled the action.
    case runWithoutOutput = "run"
}

/// How the coordinator's log commits reach the disk; see docs/OPERATIONS.md.
public enum LogSync: String, Sendable, CaseIterable {
    /// Every group commit is fsynced before anyone is told of its actions: its ACTIONs go out while the disk syncs,
    /// and no RESULT, COMPLETED or RELEASE before the sync is done, so no client is told of a dispatch whose action
    /// is not on disk. The default.
    case always
    /// Commits are written at once but synced every tick (50 ms): a process crash loses nothing, a power cut at most
    /// the last tick.
    case batch
    /// Never synced by FluxBus; the operating system writes when it pleases. A process crash loses nothing, a power cut
    /// may lose or damage the log.
    case off
}
