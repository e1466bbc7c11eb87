import FluxBusProtocol
import Logging
import ZeroMQ

/// The coordinator's I/O: it reads the ROUTER, feeds the engine each message with the time, and carries the engine's
/// effects out to the sockets. It owns the two sockets and the clock; the engine owns every decision. It lives on the
/// coordinator's I/O thread and is only ever touched there.
final class CoordinatorShell {
    let engine: CoordinatorEngine
    private let router: ZMQSocket
    private let publisher: ZMQSocket
    private let logger: Logger
    private let codec: Codec
    private let onStorageFailure: (BusError) -> Void
    /// Throughput and latency lately (for STATUS), and Prometheus metrics when the coordinator serves them.
    private let figures: CoordinatorFigures
    private let scope: IOLoopScope
    /// Ends the window of the COMPLETEDs the engine holds; cancelled when they go out sooner, with a publication.
    private var completedWindowTimer: IOLoopTimer?

    init(
        engine: CoordinatorEngine, router: ZMQSocket, publisher: ZMQSocket, scope: IOLoopScope, logger: Logger,
        metrics: CoordinatorMetrics? = nil, onStorageFailure: @escaping (BusError) -> Void
    ) {
        figures = CoordinatorFigures(metrics: metrics)
        engine.outgoing = { [figures] in figures.observe(&$0) }
        self.engine = engine
        self.router = router
        self.publisher = publisher
        self.scope = scope
        self.logger = logger
        self.codec = engine.codec
        self.onStorageFailure = onStorageFailure
        engine.clock = { SystemClock.now }  // read only for traced dispatches
    }

    /// Handles everything waiting on the ROUTER, sending what it causes together (in bursts of at most 512 inputs,
    /// so that a flood cannot hold replies back without end).
    ///
    /// A burst's first message that leaves the bus idle (``CoordinatorEngine/isQuiet``) ends the burst at once: a
    /// lock-step DISPATCH, the ACK that completes it, a STATUS. Their ACTION or answer then goes out before the
    /// receive that finds the socket empty, which costs libzmq a `getpid` and a `poll` of its mailbox and is nearly
    /// always all that follows. The engine handles any split of its input into bursts alike; the simulator ends a
    /// burst after every message.
    func drainRouter() throws {
        var handled = 0
        var endedEarly = false
        while let (frames, userID, peerAddress) = try router.tryReceiveWithMetadata() {
            engine.handle(.message(frames, userID: userID, peerAddress: peerAddress), at: SystemClock.now)
            handled += 1
            if handled == 1, engine.isQuiet {
                handle(.burstEnd)
                endedEarly = true
            } else if handled % 512 == 0 {
                perform(engine.takeEffects())
            }
        }
        if !endedEarly || handled > 1 { handle(.burstEnd) }
    }

    /// Hands one input to the engine, then carries out what it caused.
    func handle(_ input: CoordinatorInput) {
        engine.handle(input, at: SystemClock.now)
        perform(engine.takeEffects())
    }

    /// Sets the timer that ends the held COMPLETEDs' window, or cancels it once they went out with a publication, so
    /// that the loop does not wake for nothing.
    private func watchHeldCompletions() {
        guard let until = engine.heldCompletionsUntil else {
            completedWindowTimer?.cancel()
            completedWindowTimer = nil
            return
        }
        guard completedWindowTimer == nil else { return }
        completedWindowTimer = scope.schedule(after: max(.zero, until - SystemClock.now)) { [unowned self] in
            completedWindowTimer = nil
            handle(.completedWindowEnded)
        }
    }

    /// About once a second: a count for the rates, and the engine's view for the gauges.
    func sample() { figures.sample(engine) }

    /// Commits the log (at start and at the end), outside any other input.
    func flushLog() {
        engine.flushLog()
        perform(engine.takeEffects())
        // A clean stop leaves SQLite holding everything, for an operator's `sqlite3` and a copy of log.sqlite alone. A
        // failure loses nothing: the journal holds those writes, and the next start applies them.
        if !engine.storageFailed { try? (engine.log as? ActionLog)?.applyJournal() }
    }

    private func perform(_ effects: [CoordinatorEffect]) {
        defer { watchHeldCompletions() }
        for effect in effects {
            switch effect {
            case .send(let message, let routingID):
                do {
                    if try !router.send([routingID] + codec.encode(message), nonBlocking: true) {
                        logger.warning("send queue full, dropped \(message.command)", metadata: ["peer": "\(CoordinatorEngine.describe(routingID))"])
                    }
                } catch {
                    // ROUTER_MANDATORY: the peer is gone. Liveness will notice; nothing else to do here.
                    logger.debug("cannot send \(message.command): \(error)", metadata: ["peer": "\(CoordinatorEngine.describe(routingID))"])
                }
            case .publish(let message):
                do {
                    _ = try publisher.send(codec.encode(message), nonBlocking: true)
                } catch {
                    logger.error("cannot publish \(message.command): \(error)")
                }
            case .storageFailed(let failure):
                // The ERRORs to every waiting requester came first in `effects` and are queued on the ROUTER by now;
                // the coordinator stops by closing the sockets with their linger, which lets them leave.
                onStorageFailure(failure)
            case .syncLog:
                // The ACTIONs above are with libzmq's I/O thread and travel while this fsync runs. What the sync
                // releases goes next; if it failed, what followed it must not go out at all.
                engine.syncLog()
                perform(engine.takeEffects())
                if engine.storageFailed { return }
            }
        }
    }
}
