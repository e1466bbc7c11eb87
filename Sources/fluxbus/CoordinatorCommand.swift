import ArgumentParser
import FluxBus
import FluxBusProtocol
import ServiceLifecycle
import UnixSignals

struct CoordinatorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "coordinator",
        abstract: "Run the coordinator: it orders actions, holds the waitFor graph, and waits for acknowledgements.",
        discussion: """
            Binds a ROUTER (--control) for workers and clients and a PUB (--publish) for the action stream. \
            SIGTERM or SIGINT stops it gracefully: it refuses new dispatches, completes those in hand, and exits 0.

            Every action is logged in --data-dir before it is published. Restarted, even after SIGKILL, the \
            coordinator resumes from the log under a new epoch and runs again what was logged and not completed; \
            workers rejoin by themselves. A log it cannot read stops it at start-up (exit 5) instead of starting an \
            empty bus, and so does a log that is missing, empty or shorter than what its data directory had \
            committed (log.mark beside it records the bus id and how far the log reached), or whose log.mark is \
            damaged (empty, cut short or not a mark): the message names the file, the reason and what to do. --new-bus starts from what the log holds on purpose. See \
            docs/OPERATIONS.md, sections 9 to 11, for backups and recovery.

            Examples:
              fluxbus coordinator
              fluxbus coordinator --control tcp://127.0.0.1:7401 --publish tcp://127.0.0.1:7400 --topology flight.json
              fluxbus coordinator --data-dir /var/lib/fluxbus --sync batch --retain 1000000
            """)

    @Option(help: ArgumentHelp(
        "Where the ROUTER for workers and clients binds; repeat to bind several (e.g. TCP and ipc://).", valueName: "endpoint"))
    var control: [String] = [BusDefaults.controlEndpoint]

    @Option(help: ArgumentHelp("Where the PUB for the action stream binds; repeat to bind several.", valueName: "endpoint"))
    var publish: [String] = [BusDefaults.publishEndpoint]

    @Option(help: ArgumentHelp(
        "The publish endpoint to tell workers, when they must reach it under another address (default: the first --publish).",
        valueName: "endpoint"))
    var advertise: String?

    @Option(help: ArgumentHelp(
        "What stores waiting for a lost store do: skip (reported skipped), or run (without its output).", valueName: "policy"))
    var lostDependency: String = LostDependencyPolicy.skip.rawValue

    @Option(help: ArgumentHelp(
        "Mark an action poisoned for a store after its handler crashed workers this many times on it (reported by the restarted workers); replicas then skip it. 0 never marks one.",
        valueName: "crashes"))
    var poisonAfter = 3

    @Option(help: ArgumentHelp(
        "A JSON file pinning the graph: {\"stores\": [{\"name\": \"city\", \"dependsOn\": [\"country\"], \"replicas\": 1}]}. Workers must match it.",
        valueName: "file"))
    var topology: String?

    @Option(help: "Seconds a dispatch waits for acknowledgements before silent replicas are marked lost.")
    var ackTimeout: Double = 5

    @Option(help: "Seconds a state request (`fluxbus state`, or a snapshot for compaction) waits for the replica's first answer; it encodes the whole state first, which takes seconds for hundreds of megabytes. Once chunks flow, each must follow within --ack-timeout. A client's own --timeout still bounds its wait.")
    var stateTimeout: Double = Double(BusDefaults.stateTimeout.components.seconds)

    @Option(help: "Milliseconds between heartbeats; a peer silent for 4 of them is lost.")
    var heartbeatMs: Int = 500

    @Option(help: "Milliseconds before the ACTION is first re-sent to a replica that has not acknowledged; the wait then doubles up to 1 s.")
    var resendMs: Int = 200

    @Option(help: "Milliseconds a COMPLETED may wait for the next ACTION, to be published with it: a lock-step client's workers then wake once per dispatch, not twice, and `tail` shows it that much later at most; 0 to 100, 0 publishes each at once.")
    var completedWindowMs: Int = 1

    @Option(help: "Actions that may wait behind the request in flight (a batch counts each) before clients are told the bus is busy.")
    var queueLimit = BusDefaults.queueLimit

    @Option(help: "The most actions one batch (DISPATCH_BATCH, `fluxbus dispatch --batch`) may hold; at most 10000, what a worker keeps ahead of its turn.")
    var maxBatch = 4_096

    @Option(help: "The most dispatches in flight at once, 1 to 4096: a waiting request starts before those in flight are answered if all of them, its own included, fit. Workers still apply every action in order. 1 answers each request before the next starts.")
    var maxInFlight = 4_096

    @Option(help: ArgumentHelp(
        "Where the durable log lives (log.sqlite inside). A restarted coordinator resumes from it.", valueName: "dir"))
    var dataDir = "./fluxbus-data"

    @Flag(help: "Keep the log in memory instead of --data-dir: a restart then starts a new bus, and workers that applied the old one are refused.")
    var inMemory = false

    @Flag(help: "Start from what the log holds even if it is missing, empty or shorter than what this data directory had committed, or its log.mark is damaged (a new bus when the log is empty); workers that applied more are refused.")
    var newBus = false

    @Option(help: ArgumentHelp(
        "How log commits reach the disk: always (fsynced before anyone is told of an action; its ACTION travels during the fsync), batch (synced every 50 ms), off (left to the OS).",
        valueName: "mode"))
    var sync = LogSync.always.rawValue

    @Option(help: "Completed dispatches the log keeps at least; older ones are dropped once every store has a snapshot.")
    var retain = BusDefaults.retain

    @Option(help: "Bytes per chunk when a store's state streams (SNAPSHOT, STATE): what a SNAPSHOT carries inline and what each PULL asks for; 1 to 8388608.")
    var chunkBytes = TransferWindow.defaultChunkSize

    @Option(help: "After a restart, seconds dispatching waits for the previous run's stores to have a live replica again.")
    var recoveryGraceSeconds: Double = 10

    @Option(help: "The largest action payload accepted, in bytes; a larger dispatch is refused.")
    var maxPayloadBytes = 1 << 20

    @Option(help: "The largest frame accepted from any peer, in bytes (ZMQ_MAXMSGSIZE, which libzmq applies per frame); a peer sending more is disconnected without an answer. By default 32 MiB, twice the protocol's 16 MiB, so that a request over the protocol's limits is answered with an ERROR instead.")
    var maxMessageBytes = 32 << 20

    @Option(help: "Connections that may wait for one request id in flight or queued; each gets the answer once, and one more is refused as busy.")
    var maxWaitersPerRequest = 1_024

    @Flag(help: "Refuse (ERROR 11, nothing logged) a dispatch that no store can run: none handles its type, or those that do wait for a store no worker hosts. By default it is logged, and its result has no outcomes: the client reports it unhandled (fluxbus dispatch exits 1).")
    var refuseUnhandled = false

    @Option(help: "Malformed messages one peer may send per second before it is quarantined.")
    var maxMalformedPerSecond = 100

    @Option(help: "Seconds a quarantined peer's messages are dropped unread.")
    var quarantineSeconds: Double = 60

    @Option(help: "Workers the coordinator accepts; a HELLO beyond is refused.")
    var maxWorkers = 1_024

    @Option(help: "Stores one worker may declare; a larger HELLO is refused.")
    var maxStoresPerWorker = 256

    @Option(help: ArgumentHelp(
        "Turn on CURVE with this secret key file (mode 0600, from `fluxbus keygen`); needs --authorized-keys.",
        valueName: "file"))
    var curveSecretKey: String?

    @Option(help: ArgumentHelp(
        "The keys admitted with CURVE, one per line: PUBLIC-KEY NAME ROLE (worker, client or admin).", valueName: "file"))
    var authorizedKeys: String?

    @OptionGroup var metrics: MetricsOptions

    @OptionGroup var logging: LoggingOptions

    func validate() throws {
        guard ackTimeout > 0 else { throw ValidationError("--ack-timeout must be positive") }
        guard stateTimeout > 0 else { throw ValidationError("--state-timeout must be positive") }
        guard heartbeatMs >= 10 else { throw ValidationError("--heartbeat-ms must be at least 10") }
        guard resendMs >= 1 else { throw ValidationError("--resend-ms must be at least 1") }
        guard (0...100).contains(completedWindowMs) else {
            throw ValidationError("--completed-window-ms must be 0 to 100, not \(completedWindowMs)")
        }
        guard LogSync(rawValue: sync) != nil else {
            throw ValidationError("--sync must be always, batch or off, not '\(sync)'")
        }
        guard (1...BusDefaults.largestBatch).contains(maxBatch) else {
            throw ValidationError("--max-batch must be 1 to \(BusDefaults.largestBatch), not \(maxBatch)")
        }
        guard (1...4_096).contains(maxInFlight) else {
            throw ValidationError("--max-in-flight must be 1 to 4096, not \(maxInFlight)")
        }
        guard (1...Limits.default.maxBytesField).contains(chunkBytes) else {
            throw ValidationError("--chunk-bytes must be 1 to \(Limits.default.maxBytesField), not \(chunkBytes)")
        }
        guard recoveryGraceSeconds >= 0 else { throw ValidationError("--recovery-grace-seconds must not be negative") }
        guard queueLimit > 0, retain > 0, maxWorkers > 0, maxStoresPerWorker > 0, maxPayloadBytes > 0,
            maxMessageBytes > 0, maxWaitersPerRequest > 0, maxMalformedPerSecond > 0, quarantineSeconds >= 0
        else {
            throw ValidationError("--queue-limit, --retain and the --max-… limits must be positive")
        }
        guard (curveSecretKey == nil) == (authorizedKeys == nil) else {
            throw ValidationError("CURVE needs both --curve-secret-key and --authorized-keys: without a list of keys, CURVE would encrypt but admit anyone")
        }
        guard LostDependencyPolicy(rawValue: lostDependency) != nil else {
            throw ValidationError("--lost-dependency must be skip or run, not '\(lostDependency)'")
        }
        guard poisonAfter >= 0 else {
            throw ValidationError("--poison-after must be 0 (never) or a number of crashes, not \(poisonAfter)")
        }
    }

    func run() async throws {
        let logger = logging.bootstrap(label: "fluxbus.coordinator")
        do {
            var configuration = CoordinatorConfiguration(
                controlEndpoint: control[0], publishEndpoint: publish[0], advertisedPublishEndpoint: advertise,
                topology: try topology.map(Topology.load(from:)),
                ackTimeout: .milliseconds(Int64(ackTimeout * 1000)), heartbeatInterval: .milliseconds(Int64(heartbeatMs)),
                queueLimit: queueLimit, retain: retain)
            configuration.stateTimeout = .milliseconds(Int64(stateTimeout * 1000))
            configuration.dataDirectory = inMemory ? nil : dataDir
            configuration.sync = LogSync(rawValue: sync)!
            configuration.newBus = newBus
            configuration.maxBatch = maxBatch
            configuration.maxInFlight = maxInFlight
            configuration.transferChunkBytes = chunkBytes
            configuration.recoveryGrace = .milliseconds(Int64(recoveryGraceSeconds * 1000))
            configuration.extraControlEndpoints = Array(control.dropFirst())
            configuration.extraPublishEndpoints = Array(publish.dropFirst())
            configuration.lostDependencyPolicy = LostDependencyPolicy(rawValue: lostDependency)!
            configuration.poisonAfter = poisonAfter
            configuration.firstResend = .milliseconds(Int64(resendMs))
            configuration.completedWindow = .milliseconds(Int64(completedWindowMs))
            if let curveSecretKey, let authorizedKeys {
                configuration.security = CoordinatorSecurity(
                    keyPair: try CurveKeyFiles.loadSecret(curveSecretKey), authorizedKeys: try AuthorizedKeys.load(from: authorizedKeys))
            }
            configuration.maxPayloadBytes = maxPayloadBytes
            configuration.maxMessageBytes = maxMessageBytes
            configuration.maxWaitersPerRequest = maxWaitersPerRequest
            configuration.refuseUnhandled = refuseUnhandled
            configuration.maxMalformedPerSecond = maxMalformedPerSecond
            configuration.quarantine = .milliseconds(Int64(quarantineSeconds * 1000))
            configuration.maxWorkers = maxWorkers
            configuration.maxStoresPerWorker = maxStoresPerWorker
            configuration.metricsListen = try metrics.endpoint()
            let coordinator = Coordinator(configuration: configuration, logger: logger)
            let group = ServiceGroup(
                configuration: .init(services: [coordinator], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
            try await group.run()
        } catch {
            throw reportFailure(error)
        }
    }
}
