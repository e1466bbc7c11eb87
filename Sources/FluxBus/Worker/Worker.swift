import Foundation
import Flux
import FluxBusProtocol
import Logging
import Synchronization
import ServiceLifecycle
import ZeroMQ

/// A process that hosts stores for the bus: it joins the coordinator, catches up, runs its stores for every action
/// that names them, and acknowledges each.
///
/// As a ServiceLifecycle `Service`, a SIGTERM or SIGINT finishes the dispatch in hand, says goodbye, and returns.
/// A handler still running ``abandonGrace`` after the stop began is not waited for: the worker says goodbye without
/// acknowledging it (its outcome on this worker stays `unknown`, and a restart replays it from the checkpoint, which
/// never includes it), and ``run()`` returns while the handler's thread is left to finish unseen.
/// Heartbeats go on while a handler runs, sent by a guard thread of the worker's: a slow handler is judged by the
/// coordinator's acknowledgement deadline (`--ack-timeout`), not by the heartbeat's.
/// If the coordinator refuses the worker (a cycle, a topology conflict, a version mismatch), ``run()`` throws a
/// `BusError` with the coordinator's reason.
///
/// ```swift
/// let worker = Worker(configuration: .init(id: "w1", stores: [HostedStore(CountryStore.self)]))
/// try await ServiceGroup(services: [worker], gracefulShutdownSignals: [.sigterm], logger: logger).run()
/// ```
public final class Worker: Service, Sendable {
    public let configuration: WorkerConfiguration
    private let context: ZMQContext?
    private let logger: Logger
    private let eventStream: AsyncStream<WorkerEvent>
    private let eventContinuation: AsyncStream<WorkerEvent>.Continuation
    /// Where ``stop()`` and ``state(of:named:)`` find the running engine.
    let running = Mutex<Running?>(nil)

    /// The engine's shell on its I/O thread, and the guard that watches that thread.
    struct Running: Sendable {
        let shell: IOLoopBound<WorkerShell>
        let liveness: LivenessGuard
    }

    /// Creates a worker.
    /// - Parameters:
    ///   - configuration: the worker's id, its coordinator, the stores it hosts, and its checkpoint and CURVE settings.
    ///   - context: a ZeroMQ context to share, as `inproc://` endpoints need; by default the worker makes its own.
    ///   - logger: where it logs joining, catching up, and stopping.
    public init(
        configuration: WorkerConfiguration, context: ZMQContext? = nil,
        logger: Logger = Logger(label: "fluxbus.worker")
    ) {
        self.configuration = configuration
        self.context = context
        self.logger = logger
        (eventStream, eventContinuation) = AsyncStream.makeStream(of: WorkerEvent.self, bufferingPolicy: .bufferingNewest(100_000))
    }

    /// How long a graceful stop waits for the dispatch in hand before the worker stops anyway.
    public static let shutdownDeadline = Duration.seconds(10)

    /// How long a graceful stop waits for a handler that is running before the worker says goodbye without it.
    public static let abandonGrace = Duration.seconds(2)

    /// Removes the crash marker file of worker `id` (docs/OPERATIONS.md, "Poison actions"), for a caller that ran a
    /// throwaway worker under an id no other process uses, such as `fluxbus bench`'s replica. A worker leaves its own
    /// file when it stops, even cleanly: another process of the same id may have that file open, to report its death.
    public static func removeCrashMarker(worker id: String, dataDirectory: String? = nil) {
        try? FileManager.default.removeItem(atPath: HandlerCrashMarker.path(worker: id, directory: dataDirectory))
    }

    /// What the worker reports as it runs. One consumer.
    public var events: AsyncStream<WorkerEvent> { eventStream }

    /// Stops the worker gracefully, as SIGTERM does under a `ServiceGroup`: it finishes the dispatch in hand (or
    /// gives up on a handler still running after ``abandonGrace``), says goodbye, and ``run()`` returns. Does nothing
    /// before `run()` has started or after it ended.
    public func stop() {
        guard let engine = running.withLock({ $0 }) else { return }
        Self.beginStop(engine)
    }

    /// Joins and serves until graceful shutdown, cancellation, or refusal.
    /// - Throws: `BusError`: `usage` for a bad configuration, `refused` when the coordinator refused the worker.
    public func run() async throws {
        try configuration.validate()
        let context = try self.context ?? ZMQContext()
        // Abandoned, the I/O thread is still inside a handler with its sockets open: shutting the context down could
        // cut the GOODBYE short, and nothing may wait for that thread. The context goes when its last socket does.
        var abandoned = false
        defer { if self.context == nil, !abandoned { context.shutdown() } }
        let loop = try IOLoop(context: context, name: "fluxbus-worker") { [logger] error in
            logger.error("worker I/O error: \(error)")
        }
        defer { eventContinuation.finish() }
        let stopped = OneShot<BusError?>()
        let configuration = self.configuration
        let (logger, events) = (self.logger, eventContinuation)
        let registry = configuration.metricsListen.map { _ in MetricsRegistry() }
        // Before joining: a port in use stops the worker before the coordinator counts it.
        let metricsServer: MetricsServer?
        do {
            metricsServer = try registry.map { try MetricsServer.start(at: configuration.metricsListen!, registry: $0, logger: logger) }
        } catch {
            await loop.shutdown()
            throw error
        }
        defer { metricsServer?.stop() }
        let engine: Running
        do {
            engine = try await loop.run { scope in
                let journal = try configuration.journalPath.map(Journal.init(path:))
                let dealer = try scope.socket(.dealer)
                let instance = UInt64.random(in: 1...UInt64.max)
                try dealer.set(.routingID, to: WorkerRoutingID.make(configuration.id, instance: instance))
                try dealer.set(.sendHighWaterMark, to: 100_000)
                try dealer.set(.receiveHighWaterMark, to: 100_000)
                try configuration.security?.apply(to: dealer)
                let engine = WorkerEngine(
                    id: configuration.id, instance: instance,
                    stores: configuration.stores.map { $0.makeStore() }, heartbeat: configuration.heartbeatInterval,
                    logger: logger, now: SystemClock.now)
                var checkpointFile: CheckpointFile?
                if let directory = configuration.dataDirectory {
                    let file = CheckpointFile(directory: directory, worker: configuration.id)
                    try file.prepare()
                    if let checkpoint = try file.load() { try engine.resume(from: checkpoint, file: file) }
                    checkpointFile = file
                }
                let marker = try HandlerCrashMarker.claim(
                    path: HandlerCrashMarker.path(worker: configuration.id, directory: configuration.dataDirectory),
                    stores: engine.stores.map(\.name))
                engine.crashMarker = marker
                engine.awaitHandler = AwaitedHandler.run
                engine.previousCrash = marker?.report
                if let crash = marker?.report {
                    logger.error("the previous process of this worker died in a store's handler; the coordinator counts it", metadata: [
                        "seq": "\(crash.sequence)", "store": "\(crash.store)", "signal": "\(crash.signal)",
                    ])
                }
                let liveness = LivenessGuard(
                    dealer: dealer,
                    standing: .init(epoch: 0, applied: engine.lastApplied, mayHeartbeat: false, heartbeat: engine.heartbeatInterval),
                    grace: Worker.abandonGrace, logger: logger, now: SystemClock.now,
                    onAbandon: { stopped.finish(.success(nil)) })
                let shell = WorkerShell(
                    engine: engine, liveness: liveness, scope: scope, dealer: dealer, configuration: configuration,
                    checkpointFile: checkpointFile, journal: journal, events: events, logger: logger,
                    metrics: registry.map { WorkerMetrics(registry: $0, stores: engine.stores) },
                    onStop: { error in stopped.finish(.success(error)) })
                if checkpointFile != nil {
                    scope.schedule(every: configuration.checkpointInterval) { shell.handle(.checkpointDue) }
                }
                do {
                    try HandshakeWatch.watch(
                        dealer, in: scope, endpoint: configuration.coordinator, usesCurve: configuration.security != nil,
                        onConnection: { shell.connectionChanged(up: $0) },
                        // A coordinator that died mid-handshake: libzmq reconnects, and joining goes on as when it is down.
                        onDrop: { logger.debug("a handshake with the coordinator was cut off; reconnecting", metadata: ["event": "\($0)"]) }
                    ) { reason in
                        shell.handle(.handshakeFailed(reason: reason))
                    }
                    try dealer.connect(configuration.coordinator)
                } catch {
                    liveness.finish()
                    throw error
                }
                scope.add(dealer) { socket in try shell.drain(socket, fromSubscriber: false) }
                if registry != nil { scope.schedule(every: .seconds(1)) { shell.sampleMetrics() } }
                Self.scheduleTicks(for: shell, in: scope)
                shell.handle(.start)
                return Running(shell: IOLoopBound(shell, scope: scope), liveness: liveness)
            }
        } catch {
            await loop.shutdown()
            if let error = error as? BusError { throw error }
            throw BusError(code: .usage, message: "cannot connect to the coordinator at \(configuration.coordinator): \(error)")
        }
        running.withLock { $0 = engine }
        defer { running.withLock { $0 = nil } }
        let liveness = engine.liveness
        defer { liveness.finish() }
        logger.info("worker started", metadata: [
            "worker": "\(configuration.id)", "coordinator": "\(configuration.coordinator)",
            "stores": "\(configuration.stores.map(\.effectiveName).joined(separator: ","))",
        ])

        let outcome: BusError?
        do {
            outcome = try await withGracefulShutdownHandler {
                try await stopped.value()
            } onGracefulShutdown: {
                Self.beginStop(engine)
            }
        } catch {
            // Cancelled: stop at once, without waiting for the dispatch in hand (nor for a handler that runs).
            if !liveness.isAbandoned { await loop.shutdown() }
            throw error
        }
        abandoned = liveness.isAbandoned
        if abandoned {
            logger.warning("worker stopped without waiting for the handler in hand", metadata: ["worker": "\(configuration.id)"])
            return
        }
        await loop.shutdown()
        if let outcome { throw outcome }
        logger.info("worker stopped", metadata: ["worker": "\(configuration.id)"])
    }

    /// A graceful stop: the engine finishes the dispatch in hand and says goodbye; the guard watches that the I/O
    /// thread comes back from a handler in time to do so.
    private static func beginStop(_ running: Running) {
        let shell = running.shell
        shell.loop.execute { scope in
            shell.value.handle(.shutdown)
            // A dispatch in hand may wait for a RELEASE from a coordinator that is gone: do not wait for ever.
            scope.schedule(after: Worker.shutdownDeadline) {
                shell.value.handle(.shutdownOverdue(reason: "the dispatch in hand did not finish within \(Worker.shutdownDeadline)"))
            }
        }
        running.liveness.stopAsked(at: SystemClock.now)
    }

    /// Ticks at the heartbeat interval, which the coordinator may change in WELCOME. While joining it ticks every
    /// 10 ms at most: a WELCOME may shorten the interval, and the first heartbeat after it must not wait for a tick
    /// scheduled at the old, longer one, or the coordinator writes the new worker off as silent.
    private static func scheduleTicks(for shell: WorkerShell, in scope: IOLoopScope) {
        let engine = shell.engine
        let interval = engine.phase == .joining ? min(engine.heartbeatInterval, .milliseconds(10)) : engine.heartbeatInterval
        scope.schedule(after: interval) {
            shell.handle(.tick)
            if engine.phase != .stopped { scheduleTicks(for: shell, in: scope) }
        }
    }
}
