import Flux
import Logging
import Synchronization
import ServiceLifecycle
import ZeroMQ

/// A process that hosts stores for the bus: it joins the coordinator, catches up, runs its stores for every action
/// that names them, and acknowledges each.
///
/// As a ServiceLifecycle `Service`, a SIGTERM or SIGINT finishes the dispatch in hand, says goodbye, and returns.
/// If the coordinator refuses the worker (a cycle, a topology conflict, a version mismatch), ``run()`` throws a
/// ``BusError`` with the coordinator's reason.
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
    /// Where ``stop()`` finds the running engine.
    private let running = Mutex<IOLoopBound<WorkerShell>?>(nil)

    /// Creates a worker.
    /// - Parameters:
    ///   - context: a ZeroMQ context to share, as `inproc://` endpoints need; by default the worker makes its own.
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

    /// What the worker reports as it runs. One consumer.
    public var events: AsyncStream<WorkerEvent> { eventStream }

    /// Stops the worker gracefully, as SIGTERM does under a `ServiceGroup`: it finishes the dispatch in hand, says
    /// goodbye, and ``run()`` returns. Does nothing before `run()` has started or after it ended.
    public func stop() {
        guard let engine = running.withLock({ $0 }) else { return }
        engine.loop.execute { _ in engine.value.handle(.shutdown) }
    }

    /// Joins and serves until graceful shutdown, cancellation, or refusal.
    /// - Throws: ``BusError``: `usage` for a bad configuration, `refused` when the coordinator refused the worker.
    public func run() async throws {
        try configuration.validate()
        let context = try self.context ?? ZMQContext()
        defer { if self.context == nil { context.shutdown() } }
        let loop = try IOLoop(context: context, name: "fluxbus-worker") { [logger] error in
            logger.error("worker I/O error: \(error)")
        }
        defer { eventContinuation.finish() }
        let stopped = OneShot<BusError?>()
        let configuration = self.configuration
        let (logger, events) = (self.logger, eventContinuation)
        let engine: IOLoopBound<WorkerShell>
        do {
            engine = try await loop.run { scope in
                let journal = try configuration.journalPath.map(Journal.init(path:))
                let dealer = try scope.socket(.dealer)
                try dealer.set(.routingID, to: Array(configuration.id.utf8))
                try dealer.set(.sendHighWaterMark, to: 100_000)
                try dealer.set(.receiveHighWaterMark, to: 100_000)
                try configuration.security?.apply(to: dealer)
                let engine = WorkerEngine(
                    id: configuration.id, instance: UInt64.random(in: 1...UInt64.max),
                    stores: configuration.stores.map { $0.makeStore() }, heartbeat: configuration.heartbeatInterval,
                    logger: logger, now: SystemClock.now)
                var checkpointFile: CheckpointFile?
                if let directory = configuration.dataDirectory {
                    let file = CheckpointFile(directory: directory, worker: configuration.id)
                    try file.prepare()
                    if let checkpoint = try file.load() { try engine.resume(from: checkpoint, file: file) }
                    checkpointFile = file
                }
                let shell = WorkerShell(
                    engine: engine, scope: scope, dealer: dealer, configuration: configuration,
                    checkpointFile: checkpointFile, journal: journal, events: events, logger: logger,
                    onStop: { error in stopped.finish(.success(error)) })
                if checkpointFile != nil {
                    scope.schedule(every: configuration.checkpointInterval) { shell.handle(.checkpointDue) }
                }
                try HandshakeWatch.watch(dealer, in: scope, endpoint: configuration.coordinator) { reason in
                    shell.handle(.handshakeFailed(reason: reason))
                }
                try dealer.connect(configuration.coordinator)
                scope.add(dealer) { socket in try shell.drain(socket, fromSubscriber: false) }
                Self.scheduleTicks(for: shell, in: scope)
                shell.handle(.start)
                return IOLoopBound(shell, scope: scope)
            }
        } catch {
            await loop.shutdown()
            if let error = error as? BusError { throw error }
            throw BusError(code: .usage, message: "cannot connect to the coordinator at \(configuration.coordinator): \(error)")
        }
        running.withLock { $0 = engine }
        defer { running.withLock { $0 = nil } }
        logger.info("worker started", metadata: [
            "worker": "\(configuration.id)", "coordinator": "\(configuration.coordinator)",
            "stores": "\(configuration.stores.map(\.effectiveName).joined(separator: ","))",
        ])

        let outcome: BusError?
        do {
            outcome = try await withGracefulShutdownHandler {
                try await stopped.value()
            } onGracefulShutdown: {
                loop.execute { scope in
                    engine.value.handle(.shutdown)
                    // A dispatch in hand may wait for a RELEASE from a coordinator that is gone: do not wait for ever.
                    scope.schedule(after: Worker.shutdownDeadline) {
                        engine.value.handle(.shutdownOverdue(reason: "the dispatch in hand did not finish within \(Worker.shutdownDeadline)"))
                    }
                }
            }
        } catch {
            // Cancelled: stop at once, without waiting for the dispatch in hand.
            await loop.shutdown()
            throw error
        }
        await loop.shutdown()
        if let outcome { throw outcome }
        logger.info("worker stopped", metadata: ["worker": "\(configuration.id)"])
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
