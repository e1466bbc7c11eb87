/// The bus's defaults, shared by the coordinator, workers, clients and the CLI.
public enum BusDefaults {
    /// Where the coordinator's ROUTER listens for workers and clients.
    public static let controlEndpoint = "tcp://127.0.0.1:7401"
    /// Where the coordinator publishes the action stream.
    public static let publishEndpoint = "tcp://127.0.0.1:7400"
    /// The environment variable that overrides the control endpoint for clients and workers.
    public static let coordinatorEnvironmentVariable = "FLUXBUS_COORDINATOR"
    /// How often peers send heartbeats.
    public static let heartbeatInterval = Duration.milliseconds(500)
    /// How many heartbeat intervals of silence make a peer lost.
    public static let livenessIntervals = 4
    /// How long a dispatch waits for acknowledgements before the silent replicas are marked lost.
    public static let ackTimeout = Duration.seconds(5)
    /// How long the coordinator waits for a replica's first answer to a state request (a client's read, or a snapshot
    /// for compaction). The replica encodes the whole state before it answers, which takes seconds for a state of
    /// hundreds of megabytes; so much longer than ``ackTimeout``, and longer than any sane client timeout.
    public static let stateTimeout = Duration.seconds(120)
    /// How many dispatches may wait behind the one in flight before clients are told the bus is busy.
    public static let queueLimit = 10_000
    /// How many completed dispatches the log keeps at least, for replicas that catch up by replay.
    public static let retain = 100_000
    /// The most actions a coordinator lets one DISPATCH_BATCH hold (the ceiling of `--max-batch`). A batch larger
    /// than `--max-in-flight` starts alone, all of it in flight, so a worker keeps this many of the ACTIONs that come
    /// ahead of their turn, and remembers this many acknowledgements to send again after a coordinator restart.
    public static let largestBatch = 10_000
}
