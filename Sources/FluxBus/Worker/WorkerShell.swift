import Dispatch
import Flux
import FluxBusProtocol
import Logging
import ZeroMQ

/// The worker's I/O: it reads the DEALER and the SUB socket, feeds the engine each message with the time, and carries
/// the engine's effects out: sends, the subscription, the checkpoint file, the journal and the event stream. It lives
/// on the worker's I/O thread and is only ever touched there.
///
/// Every engine input is marked for the ``LivenessGuard``, which heartbeats while the engine is busy and may abandon
/// the shell on a graceful stop; an abandoned shell performs nothing more and ends the loop.
final class WorkerShell {
    let engine: WorkerEngine
    let liveness: LivenessGuard
    /// The guard gave up on this thread during a graceful stop: nothing the engine does any more may leave.
    private var abandoned = false
    private let scope: IOLoopScope
    private let dealer: ZMQSocket
    private var subscriber: ZMQSocket?
    private let security: PeerSecurity?
    private let checkpointFile: CheckpointFile?
    private let journal: Journal?
    private let events: AsyncStream<WorkerEvent>.Continuation
    /// ``WorkerConfiguration/reportsEvents``: a yield costs a lock and a buffer slot, once per store per action.
    private let reportsEvents: Bool
    /// ``WorkerConfiguration/reportsAppliedEvents``.
    private let reportsAppliedEvents: Bool
    private let onStop: (BusError?) -> Void
    private let logger: Logger
    /// Fault injection: see ``WorkerConfiguration/dropPublishedRate``.
    private let dropPublishedRate: Double
    /// Where states are encoded for STATE: one serial queue, off the I/O thread and off Swift's cooperative pool.
    private let encoder = DispatchQueue(label: "fluxbus-worker-encode")
    /// Where checkpoints are encoded and written, one at a time, off the I/O thread.
    private let checkpointWriter = DispatchQueue(label: "fluxbus-worker-checkpoint")
    /// Whether a checkpoint is being written; the next is taken at the interval after it.
    private var checkpointInFlight = false
    /// Which of the engine's HELLOs the DEALER takes: one queued through an outage, then none while it is in flight.
    private var hellos: HelloGate
    /// Prometheus metrics, when the worker serves them.
    private let metrics: WorkerMetrics?

    init(
        engine: WorkerEngine, liveness: LivenessGuard, scope: IOLoopScope, dealer: ZMQSocket, configuration: WorkerConfiguration,
        checkpointFile: CheckpointFile?, journal: Journal?, events: AsyncStream<WorkerEvent>.Continuation, logger: Logger,
        metrics: WorkerMetrics? = nil, onStop: @escaping (BusError?) -> Void
    ) {
        self.metrics = metrics
        self.engine = engine
        engine.clock = { SystemClock.now }  // read only for traced dispatches
        self.liveness = liveness
        self.scope = scope
        self.dealer = dealer
        self.security = configuration.security
        self.dropPublishedRate = configuration.dropPublishedRate
        hellos = HelloGate(holdsQueuedHellos: !configuration.coordinator.hasPrefix("inproc://"))
        self.checkpointFile = checkpointFile
        self.journal = journal
        self.events = events
        self.reportsEvents = configuration.reportsEvents
        self.reportsAppliedEvents = configuration.reportsAppliedEvents
        self.logger = logger
        self.onStop = onStop
        engine.keepsCheckpoint = checkpointFile != nil
        engine.reportsApplied = journal != nil || metrics != nil || (configuration.reportsEvents && configuration.reportsAppliedEvents)
    }

    /// Hands one input to the engine, then carries out what it caused.
    func handle(_ input: WorkerInput) {
        guard !abandoned, run(input) != .abandoned else { return }
        perform(engine.takeEffects())
    }

    /// Handles everything waiting on a socket; what that causes (ACKs, above all) goes out together at the end, or
    /// every 512 messages in a long burst. A graceful stop ends the burst early, so that the loop runs the stop.
    ///
    /// What the burst's first message causes goes out at once: a lock-step ACTION's ACK then leaves before the
    /// receive that finds the socket empty, which costs libzmq a `getpid` and a `poll` of its mailbox and is nearly
    /// always all that follows. A long burst still joins the rest of its ACKs.
    func drain(_ socket: ZMQSocket, fromSubscriber: Bool) throws {
        guard !abandoned else { return }
        defer { if !abandoned { perform(engine.takeEffects()) } }
        var handled = 0
        while let frames = try socket.tryReceive() {
            if fromSubscriber, dropPublishedRate > 0, Double.random(in: 0..<1) < dropPublishedRate { continue }
            if !fromSubscriber { hellos.heardFromCoordinator() }
            let verdict = run(.message(frames, fromSubscriber: fromSubscriber))
            if verdict == .abandoned || engine.phase == .stopped || (verdict == .stopAsked && !engine.stopping) { return }
            handled += 1
            if engine.heldMessages >= 512 || engine.flushesEarly || (handled == 1 && engine.heldMessages > 0) {
                perform(engine.takeEffects())
            }
        }
    }

    /// Runs one input through the engine, marked for the guard, at the time it starts.
    private func run(_ input: WorkerInput) -> LivenessGuard.Verdict {
        let now = SystemClock.now
        let phase = engine.phase
        let ticking = if case .tick = input { true } else { false }
        liveness.enter(at: now, standing: .init(
            epoch: engine.epoch, applied: engine.lastApplied, mayHeartbeat: phase == .live || phase == .catchingUp,
            heartbeat: engine.heartbeatInterval), ticking: ticking)
        engine.handle(input, at: now)
        let verdict = liveness.leave()
        if verdict == .abandoned {
            // The guard said GOODBYE for this worker, and its run() has returned: drop what the engine did (an ACK,
            // a checkpoint whose states may not match its sequence), and end the loop.
            abandoned = true
            _ = engine.takeEffects()
            scope.stop()
        }
        return verdict
    }

    /// The DEALER's connection came up or went down.
    func connectionChanged(up: Bool) {
        hellos.connectionChanged(up: up, at: SystemClock.now)
    }

    /// Whether the engine's HELLO goes now (``HelloGate``).
    private func mayQueueHello() -> Bool {
        switch hellos.admitHello(at: SystemClock.now) {
        case .send:
            return true
        case .alreadyQueued:
            logger.debug("not connected to the coordinator yet; the HELLO already queued goes when the connection is up")
        case .heldHelloInFlight(let since):
            logger.debug("the HELLO held through the outage left \(since.milliseconds) ms ago; waiting for its WELCOME")
        }
        return false
    }

    private func perform(_ effects: [WorkerEffect]) {
        for effect in effects {
            switch effect {
            case .send(let message):
                if case .hello = message, !mayQueueHello() { continue }
                do {
                    _ = try dealer.send(engine.codec.encode(message), nonBlocking: true)
                } catch {
                    logger.warning("cannot send \(message.command): \(error)")
                }
            case .subscribe(let endpoint):
                do {
                    try subscribe(to: endpoint)
                } catch {
                    logger.error("cannot subscribe to the publish endpoint", metadata: ["publish": "\(endpoint)", "error": "\(error)"])
                    handle(.handshakeFailed(reason: "cannot subscribe to \(endpoint): \(error)"))
                }
            case .writeCheckpoint(let draft):
                write(draft)
            case .event(let event):
                var isApplied = false
                if case .applied(let sequence, let store, let status) = event {
                    journal?.record(sequence: sequence, store: store, status: status)
                    isApplied = true
                }
                metrics?.observe(event)
                if reportsEvents, reportsAppliedEvents || !isApplied { events.yield(event) }
            case .stop(let error):
                // The last checkpoint is on disk before the worker says it stopped.
                checkpointWriter.sync {}
                onStop(error)
            case .encodeState(let requestID, let copy):
                encode(copy, for: requestID)
            }
        }
    }

    /// Encodes and writes a checkpoint on ``checkpointWriter``: a large state takes seconds to encode, and the I/O
    /// thread goes on meanwhile. One at a time; one due while another is written waits for the next interval. The
    /// last one, at stop, has no next interval: it queues behind the one in flight, and `.stop` waits for both.
    private func write(_ draft: CheckpointDraft) {
        guard let file = checkpointFile else { return }
        guard !checkpointInFlight || engine.phase == .stopped else { return engine.checkpointWriteFailed() }
        checkpointInFlight = true
        let shell = IOLoopBound(self, scope: scope)
        let (loop, logger) = (scope.loop, logger)
        checkpointWriter.async {
            var failure: (any Error)?
            do {
                try file.write(try draft.encoded())
                logger.debug("checkpoint written", metadata: ["seq": "\(draft.lastApplied)", "file": "\(file.path)"])
            } catch {
                logger.error("cannot write the checkpoint; the previous one stands", metadata: ["error": "\(error)"])
                failure = error
            }
            let failed = failure != nil
            loop.execute { _ in shell.value.checkpointWritten(failed: failed) }
        }
    }

    private func checkpointWritten(failed: Bool) {
        checkpointInFlight = false
        if failed, !abandoned { engine.checkpointWriteFailed() }
    }

    /// Samples the worker's gauges, when it serves metrics.
    func sampleMetrics() {
        if !abandoned { metrics?.sample(engine) }
    }

    /// Encodes a state copy on ``encoder`` and hands the bytes back to the engine on the I/O thread.
    private func encode(_ copy: StoreStateCopy, for requestID: String) {
        let shell = IOLoopBound(self, scope: scope)
        let loop = scope.loop
        encoder.async {
            let result = EncodedState.encode(copy)
            loop.execute { _ in shell.value.handle(.stateEncoded(requestID: requestID, result)) }
        }
    }

    private func subscribe(to endpoint: String) throws {
        if let old = subscriber {
            scope.remove(old)
            old.close()
            subscriber = nil
        }
        let socket = try scope.socket(.sub)
        try socket.set(.receiveHighWaterMark, to: 100_000)
        try security?.apply(to: socket)
        try socket.subscribe(Codec.signature)
        try socket.connect(endpoint)
        scope.add(socket) { [unowned self] socket in try self.drain(socket, fromSubscriber: true) }
        subscriber = socket
    }
}
