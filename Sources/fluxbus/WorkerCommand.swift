import ArgumentParser
import FluxBus
import FluxBusTools
import ServiceLifecycle
import UnixSignals

struct WorkerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "worker",
        abstract: "Run a worker that hosts stores for the bus.",
        discussion: """
            Each --store is NAME=KIND[,after=DEP+DEP][,handles=TYPE+TYPE]. The built-in kinds:
              kv       a replicated map: kv.set {"key":K,"value":ANY}, kv.delete {"key":K}
              counter  counter.add {"by":N}; state {"value":N}
              country  country-update {"country":C}
              city     waits for country; picks the country's default city; also city-update {"city":X}
              price    waits for city; prices the destination
              sleep    a probe for slow handlers: sleep.for {"ms":N} blocks the worker
                       N ms (at most 600000), sleep.await {"ms":N} awaits as long in an async
                       handler; state {"sleeps":N,"ms":M}
              crash    a test probe for handlers that trap: crash.run {"crash":true} kills
                       the worker (fatalError), {"crash":false} counts; state {"runs":N}
            after= replaces the kind's own dependencies; handles= limits it to some of its action types.

            SIGTERM or SIGINT finishes the dispatch in hand, says goodbye, and exits 0. If the coordinator refuses \
            the worker (a cycle, a topology conflict, a version mismatch, or another live process with its --id) \
            it prints why and exits 4. While the process that held its --id may have crashed (until the \
            coordinator's liveness deadline passes), it says HELLO again each second instead, and takes the id \
            back once the coordinator writes the old one off.

            A slow handler does not make the worker look dead: it keeps heartbeating while the handler runs, and \
            the coordinator judges the dispatch by its --ack-timeout (past it, the outcome on this worker is \
            unknown until the handler returns and its ACK fills it in). A SIGTERM that finds a handler still \
            running after 2 s does not wait for it: the worker says goodbye without acknowledging it and exits 0; \
            the dispatch's outcome on this worker stays unknown, and a restart replays it (from the checkpoint, \
            with --data-dir). The sleep kind shows this: fluxbus dispatch sleep.for '{"ms":10000}'.

            With --data-dir, the worker keeps a checkpoint (DIR/ID.checkpoint: its stores' states, the last \
            sequence applied, its recent acknowledgements), rewritten every --checkpoint-ms when something changed \
            and on a graceful stop. Restarted, it resumes from it and catches up only what it lacks, never applying \
            a sequence twice. A checkpoint it cannot use (corrupt, unreadable, of other stores) stops it with exit 2: \
            move the file aside to start empty and catch up from the coordinator. Without --data-dir a worker \
            starts empty and catches up from the coordinator (by replay, or from snapshots).

            Examples:
              fluxbus worker --id w1 --store counter=counter
              fluxbus worker --id w2 --store city=city --store price=price --coordinator tcp://127.0.0.1:7401
              fluxbus worker --id w3 --store counter=counter --data-dir /var/lib/fluxbus
            """)

    @Option(help: "The worker's id: stable across restarts, unique on the bus.")
    var id: String

    @Option(name: .customLong("store"), help: ArgumentHelp("A store to host: NAME=KIND[,after=DEP+DEP][,handles=TYPE+TYPE].", valueName: "spec"))
    var stores: [String] = []

    @Option(name: .customLong("coordinator"), help: ArgumentHelp(
        "The coordinator's control endpoint; defaults to $FLUXBUS_COORDINATOR, then the config file's \"coordinator\", then \(BusDefaults.controlEndpoint).",
        valueName: "endpoint"))
    var endpoint: String?

    @Option(help: ArgumentHelp(
        "Append a line per store per dispatch to this file: sequence, store, status, CLOCK_MONOTONIC nanoseconds.",
        valueName: "file"))
    var journal: String?

    @Option(name: .customLong("data-dir"), help: ArgumentHelp(
        "Keep a checkpoint in this directory (created if missing) and resume from it on restart.", valueName: "dir"))
    var dataDirectory: String?

    @Option(name: .customLong("checkpoint-ms"), help: ArgumentHelp(
        "With --data-dir, how often to rewrite the checkpoint when something changed, in milliseconds.",
        valueName: "ms"))
    var checkpointMillis: Int = 1_000

    @Option(help: ArgumentHelp(
        "Fault injection for testing: drop this fraction (0 to 1) of the messages that arrive on SUB, as if lost.",
        valueName: "rate"))
    var dropPublished: Double = 0

    @OptionGroup var curve: CurveOptions

    @OptionGroup var metrics: MetricsOptions

    @OptionGroup var logging: LoggingOptions

    func validate() throws {
        guard checkpointMillis > 0 else { throw ValidationError("--checkpoint-ms must be positive, not \(checkpointMillis)") }
        if let dataDirectory, dataDirectory.isEmpty { throw ValidationError("--data-dir needs a directory path") }
        guard !stores.isEmpty else { throw ValidationError("give at least one --store NAME=KIND, for example --store counter=counter") }
        for spec in stores {
            do { _ = try StoreSpec(parsing: spec) } catch { throw ValidationError(error.description) }
        }
    }

    func run() async throws {
        let logger = logging.bootstrap(label: "fluxbus.worker")
        let connection = ConnectionOptions(endpoint: endpoint)
        do {
            let hosted = try stores.map { HostedStore(try StoreSpec(parsing: $0)) }
            var configuration = WorkerConfiguration(
                id: id, coordinator: connection.resolvedEndpoint, stores: hosted, journalPath: journal)
            configuration.dropPublishedRate = dropPublished
            configuration.dataDirectory = dataDirectory
            configuration.checkpointInterval = .milliseconds(checkpointMillis)
            configuration.security = try curve.security()
            configuration.metricsListen = try metrics.endpoint()
            configuration.reportsEvents = false  // nothing here reads them
            let worker = Worker(configuration: configuration, logger: logger)
            let group = ServiceGroup(
                configuration: .init(services: [worker], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
            try await group.run()
        } catch {
            throw reportFailure(error)
        }
    }
}

extension ConnectionOptions {
    init(endpoint: String?) {
        self.init()
        self.endpoint = endpoint
    }
}
