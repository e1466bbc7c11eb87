/// How a ``Worker`` joins the bus and what it hosts.
public struct WorkerConfiguration: Sendable {
    /// The worker's id: stable across restarts, unique on the bus. It is also its routing id.
    public var id: String
    /// The coordinator's control endpoint.
    public var coordinator: String
    /// The stores to host.
    public var stores: [HostedStore]
    /// How often to beat until the coordinator's WELCOME says otherwise.
    public var heartbeatInterval: Duration
    /// CURVE with the coordinator; nil for plain text.
    public var security: PeerSecurity?
    /// Fault injection for resilience tests: the fraction of messages arriving on SUB to drop unread, as if the
    /// network had lost them. 0 (the default) drops nothing.
    public var dropPublishedRate: Double = 0
    /// A file to append one line to for every store that applies a dispatch (see `--journal`), or nil.
    public var journalPath: String?
    /// A directory for the worker's checkpoint (`ID.checkpoint`), or nil (the default) to keep none. A worker with
    /// a checkpoint resumes from it after a restart and catches up only what it lacks (see `--data-dir`).
    public var dataDirectory: String?
    /// How often the checkpoint is rewritten, when something changed; it is also written on a graceful stop.
    public var checkpointInterval: Duration = .seconds(1)
    /// Where to serve Prometheus's `GET /metrics` (`--metrics-listen`); nil, the default, serves none.
    public var metricsListen: MetricsEndpoint?
    /// Whether ``Worker/events`` receives what the worker does (true, the default). A process that never reads them,
    /// as `fluxbus worker`, turns it off: the stream then only ends, and no dispatch pays to fill a buffer nobody
    /// drains. The journal and the metrics see every event either way.
    public var reportsEvents = true
    /// Whether ``Worker/events`` receives `.applied`, one per store per action (true, the default), or only the
    /// worker's milestones: welcomed, resumed, a snapshot installed, live, a cascade refused, a refusal. A process that
    /// waits only for those, as `fluxbus bench catch-up` waits for `.live`, turns it off: each yield wakes the task
    /// reading the stream, and that took a quarter of a replaying replica's thread. The journal and the metrics see
    /// every event either way.
    public var reportsAppliedEvents = true

    public init(
        id: String, coordinator: String = BusDefaults.controlEndpoint, stores: [HostedStore],
        heartbeatInterval: Duration = BusDefaults.heartbeatInterval, journalPath: String? = nil
    ) {
        self.journalPath = journalPath
        self.id = id
        self.coordinator = coordinator
        self.stores = stores
        self.heartbeatInterval = heartbeatInterval
    }

    /// Checks what can be checked before joining: the id, the store names, and the waits among hosted stores.
    /// - Throws: `BusError` (`usage`) saying what to fix.
    public func validate() throws {
        guard BusName.isValid(id) else {
            throw BusError(code: .usage, message: "worker id '\(id)' must be 1 to 64 letters, digits, '.', '_' or '-'")
        }
        guard (0...1).contains(dropPublishedRate) else {
            throw BusError(code: .usage, message: "the drop rate must be between 0 and 1, not \(dropPublishedRate)")
        }
        guard checkpointInterval > .zero else {
            throw BusError(code: .usage, message: "the checkpoint interval must be positive, not \(checkpointInterval)")
        }
        if let dataDirectory, dataDirectory.isEmpty {
            throw BusError(code: .usage, message: "the data directory is empty; give a path, or leave it out to keep no checkpoint")
        }
        guard !stores.isEmpty else {
            throw BusError(code: .usage, message: "worker `\(id)` hosts no store; give at least one --store NAME=KIND")
        }
        var seen = Set<String>()
        for store in stores {
            guard BusName.isValid(store.effectiveName) else {
                throw BusError(code: .usage, message: "store name '\(store.effectiveName)' is not valid")
            }
            guard seen.insert(store.effectiveName).inserted else {
                throw BusError(code: .usage, message: "worker `\(id)` hosts two stores named `\(store.effectiveName)`; rename one")
            }
        }
    }
}
