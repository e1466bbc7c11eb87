import Foundation
import FluxBusProtocol
import Logging
import ServiceLifecycle
import ZeroMQ

/// The process that owns the order of actions and the global waitFor graph.
///
/// It binds a ROUTER for workers and clients and a PUB for the action stream, and runs its whole protocol engine on
/// one I/O thread. As a ServiceLifecycle `Service`, a SIGTERM or SIGINT stops it gracefully: it refuses new
/// dispatches, completes the one in flight and those queued (up to the acknowledgement deadline), then exits.
///
/// ```swift
/// let coordinator = Coordinator(configuration: .init(controlEndpoint: "tcp://127.0.0.1:7401"))
/// let group = ServiceGroup(services: [coordinator], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
/// try await group.run()
/// ```
public final class Coordinator: Service, Sendable {
    /// The endpoints the coordinator actually bound, with wildcard ports resolved.
    public struct Endpoints: Sendable, Hashable {
        public let control: String
        public let publish: String
    }

    public let configuration: CoordinatorConfiguration
    private let context: ZMQContext?
    private let logger: Logger
    private let bound = OneShot<Endpoints>()

    /// Creates a coordinator.
    /// - Parameters:
    ///   - configuration: endpoints, deadlines and limits.
    ///   - context: a ZeroMQ context to share, as `inproc://` endpoints need; by default the coordinator makes its own.
    ///   - logger: where it logs.
    public init(
        configuration: CoordinatorConfiguration = .init(), context: ZMQContext? = nil,
        logger: Logger = Logger(label: "fluxbus.coordinator")
    ) {
        self.configuration = configuration
        self.context = context
        self.logger = logger
    }

    /// The bound endpoints, once ``run()`` has bound them.
    public var endpoints: Endpoints {
        get async throws { try await bound.value() }
    }

    /// Binds and serves until graceful shutdown or cancellation.
    /// - Throws: `BusError` when an endpoint cannot be bound (in use, malformed, no permission).
    public func run() async throws {
        let context = try self.context ?? ZMQContext()
        defer { if self.context == nil { context.shutdown() } }
        let loop = try IOLoop(context: context, name: "fluxbus-coordinator") { [logger] error in
            logger.error("coordinator I/O error: \(error)")
        }
        let configuration = self.configuration
        let logger = self.logger
        let storageFailure = OneShot<BusError>()
        let registry = configuration.metricsListen.map { _ in MetricsRegistry() }
        // Before anything else binds: a port in use stops the coordinator before it takes its endpoints.
        let metricsServer: MetricsServer?
        do {
            metricsServer = try registry.map { try MetricsServer.start(at: configuration.metricsListen!, registry: $0, logger: logger) }
        } catch {
            bound.finish(.failure(error))
            await loop.shutdown()
            throw error
        }
        defer { metricsServer?.stop() }
        let engine: IOLoopBound<CoordinatorShell>
        do {
            engine = try await loop.run { scope in
                // The log first: a coordinator that cannot read its history must not take a port and look healthy.
                let metrics = registry.map(CoordinatorMetrics.init(registry:))
                let log = try Self.openLog(configuration, metrics: metrics?.log)
                let recovered = try log.recover()
                Self.report(recovered, path: log.path, logger: logger)
                // Epochs grow across restarts even if the clock went back.
                let epoch = max(UInt64(Date().timeIntervalSince1970 * 1000), recovered.lastEpoch + 1)
                if recovered.lastSequence > 0 {
                    logger.info("recovered the log", metadata: [
                        "path": "\(log.path ?? "memory")", "lastSequence": "\(recovered.lastSequence)",
                        "lastCompleted": "\(recovered.lastCompleted)", "toDispatchAgain": "\(recovered.pending.count)",
                        "logStartsAt": "\(log.oldestRetained)", "fromJournal": "\(recovered.journalRecordsApplied)",
                    ])
                }
                if let security = configuration.security { try Self.serveZAP(security, in: scope, logger: logger) }
                let router = try scope.socket(.router)
                try configuration.security.map { try Self.secure(router, with: $0) }
                var controlEndpoint = ""
                try router.set(.routerMandatory, to: true)
                if configuration.security == nil {
                    // A restarted worker takes its routing id over from its old, maybe half-dead, connection.
                    try router.set(.routerHandover, to: true)
                } else {
                    // With CURVE a routing id must not be taken over: any admitted key could cut a worker off by
                    // claiming its id. libzmq refuses a second connection under an id in use instead, and ZMTP
                    // heartbeats drop a silent connection after the bus's deadline, so a restarted worker gets in.
                    try router.set(.heartbeatInterval, to: configuration.heartbeatInterval)
                    try router.set(.heartbeatTimeout, to: configuration.heartbeatInterval * configuration.livenessIntervals)
                }
                try router.set(.sendHighWaterMark, to: 100_000)
                try router.set(.receiveHighWaterMark, to: 100_000)
                try router.set(.maxMessageSize, to: configuration.maxMessageBytes)
                try Self.bind(router, to: configuration.controlEndpoint, role: "control")
                controlEndpoint = try router.lastEndpoint
                for endpoint in configuration.extraControlEndpoints { try Self.bind(router, to: endpoint, role: "control") }
                let publisher = try scope.socket(.pub)
                try configuration.security.map { try Self.secure(publisher, with: $0) }
                try publisher.set(.sendHighWaterMark, to: 100_000)
                try Self.bind(publisher, to: configuration.publishEndpoint, role: "publish")
                // Resolve a wildcard port before binding more: lastEndpoint reports the last bind.
                let advertised = try configuration.advertisedPublishEndpoint ?? publisher.lastEndpoint
                for endpoint in configuration.extraPublishEndpoints { try Self.bind(publisher, to: endpoint, role: "publish") }
                let engine = CoordinatorEngine(
                    configuration: configuration, epoch: epoch, log: log, recovered: recovered,
                    controlEndpoint: controlEndpoint, advertisedPublishEndpoint: advertised, logger: logger,
                    now: SystemClock.now)
                let shell = CoordinatorShell(
                    engine: engine, router: router, publisher: publisher, scope: scope, logger: logger, metrics: metrics,
                    onStorageFailure: { storageFailure.finish(.success($0)) })
                shell.flushLog()
                scope.add(router) { _ in try shell.drainRouter() }
                scope.schedule(every: configuration.tickInterval) { shell.handle(.tick) }
                scope.schedule(every: .seconds(1)) { shell.sample() }
                return IOLoopBound(shell, scope: scope)
            }
        } catch {
            bound.finish(.failure(error))
            await loop.shutdown()
            throw error
        }
        let (endpoints, epoch) = try await loop.run { _ in
            (Endpoints(control: engine.value.engine.routerEndpoint, publish: engine.value.engine.advertisedPublishEndpoint), engine.value.engine.epoch)
        }
        bound.finish(.success(endpoints))
        if configuration.security == nil { warnAboutPlainText() }
        logger.info(
            "coordinator serving",
            metadata: ["epoch": "\(epoch)", "control": "\(endpoints.control)", "publish": "\(endpoints.publish)"])

        // Until a shutdown signal, or until the log cannot be written.
        let failure = await withTaskGroup(of: BusError?.self) { group in
            group.addTask { try? await gracefulShutdown(); return nil }
            group.addTask { try? await storageFailure.value() }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        if let failure {
            // The engine queued an ERROR for every requester still waiting before it reported the failure. Closing
            // the sockets and terminating the context waits for those to leave (at most the linger, 200 ms) before
            // the process exits; a context shared with the caller is the caller's to terminate.
            await loop.shutdown()
            if self.context == nil { await context.terminate() }
            throw failure
        }
        logger.info("coordinator stopping: finishing the dispatches in hand")
        try? await loop.run { _ in engine.value.handle(.shutdown) }
        let drainDeadline = ContinuousClock.now.advanced(by: configuration.ackTimeout + .seconds(1))
        while ContinuousClock.now < drainDeadline, !((try? await loop.run { _ in engine.value.engine.isIdle }) ?? true) {
            try? await Task.sleep(for: .milliseconds(20))
        }
        let counts = try? await loop.run { _ in
            let engine = engine.value.engine
            return [
                "malformed": engine.policing.malformed, "refused": engine.policing.refused,
                "strangers": engine.policing.strangers, "quarantined": engine.policing.quarantinedPeers,
            ]
        }
        try? await loop.run { _ in engine.value.flushLog() }
        await loop.shutdown()
        logger.info("coordinator stopped", metadata: (counts ?? [:]).mapValues { "\($0)" })
    }

    /// The log: SQLite in the data directory, or, without one (`--in-memory`), the ``MemoryLog``, which runs no SQL.
    private static func openLog(_ configuration: CoordinatorConfiguration, metrics: LogMetrics?) throws -> any BufferedLog {
        guard let directory = configuration.dataDirectory else {
            let log = MemoryLog(sync: configuration.sync)
            log.metrics = metrics
            return log
        }
        let log = try ActionLog(directory: directory, sync: configuration.sync, newBus: configuration.newBus)
        log.metrics = metrics
        return log
    }

    /// Says what opening the log decided: loudly when `--new-bus` went on from a log that lost what it had committed.
    private static func report(_ recovered: LogRecovery, path: String?, logger: Logger) {
        let metadata: Logger.Metadata = ["bus": "\(recovered.busID)", "path": "\(path ?? "memory")"]
        switch recovered.opening {
        case .created: logger.notice("created a new bus", metadata: metadata)
        case .adopted: logger.notice("the log had no mark beside it; its end is the mark now", metadata: metadata)
        case .newBus(let reason):
            logger.critical("--new-bus: going on from what the log holds, though \(reason); workers that applied more are refused",
                            metadata: metadata)
        case .continued, .inMemory: break
        }
    }

    /// Admits only the authorized keys, and gives each connection the name bound to its key as its user id.
    private static func serveZAP(_ security: CoordinatorSecurity, in scope: IOLoopScope, logger: Logger) throws {
        let keys = security.authorizedKeys
        try scope.serveZAP { request in
            guard request.mechanism == "CURVE", let key = request.curvePublicKey, let entry = keys.entry(forKey: key) else {
                logger.warning("refused a connection: its key is not authorized", metadata: [
                    "key": "\(request.curvePublicKey ?? "none (\(request.mechanism))")", "address": "\(request.address)",
                ])
                return .deny(request, statusText: "key not authorized")
            }
            return .allow(request, userID: entry.name)
        }
    }

    /// Makes a socket a CURVE server whose peers go through the ZAP handler. Before it binds.
    private static func secure(_ socket: ZMQSocket, with security: CoordinatorSecurity) throws {
        try socket.set(.curveServer, to: true)
        try socket.set(.curveSecretKey, to: security.keyPair.secretKey)
        try socket.set(.zapDomain, to: CoordinatorSecurity.domain)
    }

    /// Plain text is a choice: say so when anything beyond this machine can connect.
    private func warnAboutPlainText() {
        let endpoints = [configuration.controlEndpoint, configuration.publishEndpoint]
            + configuration.extraControlEndpoints + configuration.extraPublishEndpoints
        for endpoint in Self.reachableBeyondLoopback(endpoints) {
            logger.warning("bound without CURVE: anyone who can reach it can join and dispatch; see docs/SECURITY.md",
                           metadata: ["endpoint": "\(endpoint)"])
        }
    }

    /// The TCP endpoints that other machines may reach: every host but the loopback ones.
    static func reachableBeyondLoopback(_ endpoints: [String]) -> [String] {
        endpoints.filter { endpoint in
            guard endpoint.hasPrefix("tcp://") else { return false }
            let address = endpoint.dropFirst("tcp://".count)
            let host = address.lastIndex(of: ":").map { address[..<$0] } ?? address
            return !(host.hasPrefix("127.") || host == "localhost" || host == "[::1]" || host == "::1")
        }
    }

    private static func bind(_ socket: ZMQSocket, to endpoint: String, role: String) throws {
        do {
            try socket.bind(endpoint)
        } catch {
            throw BusError(
                code: .usage,
                message: "cannot bind the \(role) endpoint \(endpoint): \(error.message). "
                    + (error.errno == EADDRINUSE
                        ? "Another process, perhaps another coordinator, is bound there: stop it, or pass another --\(role) endpoint."
                        : "Check the endpoint's form, for example tcp://127.0.0.1:7401 or ipc:///run/fluxbus/control."))
        }
    }
}
