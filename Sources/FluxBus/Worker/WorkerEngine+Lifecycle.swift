import FluxBusProtocol
import Logging

/// The worker's timers and its ways of stopping: heartbeats and the coordinator's liveness on every tick, a graceful
/// stop that finishes the dispatch in hand, and the stops that cannot wait.
extension WorkerEngine {
    // MARK: - Timers and stopping

    func tick() {
        switch phase {
        case .stopped:
            return
        case .joining:
            if session.helloOverdue(at: now) { sayHello() }
        case .catchingUp, .live:
            if let silence = session.silenceBeyondDeadline(at: now) {
                if phase == .catchingUp, !session.heardOnSubscriber {
                    logger.warning("nothing arrived on the subscription to the publish endpoint; joining again", metadata: [
                        "publish": "\(session.subscribedEndpoint ?? "?")",
                        "hint": "check that this host can reach it; the coordinator's --advertise sets what workers are told",
                    ])
                } else {
                    logger.warning("the coordinator is silent; joining again", metadata: ["silentMillis": "\(silence.milliseconds)"])
                }
                return sayHello()
            }
            send(.heartbeat(.init(epoch: epoch, sequence: lastApplied)))
            checkTransfers()
            if catchUp.fetchOverdue(at: now) { fetchWhatIsMissing() }
        }
    }

    /// Stops without waiting any longer for the dispatch in hand; says goodbye if joined.
    func stopNow(reason: String) {
        guard phase != .stopped else { return }
        logger.warning("stopping without finishing the dispatch in hand: \(reason)")
        sayGoodbye()
    }

    /// Finishes the dispatch in hand, then says goodbye and stops.
    func beginShutdown() {
        stopping = true
        if current == nil { sayGoodbye() }
    }

    func sayGoodbye() {
        guard phase != .stopped else { return }
        // Even while joining: a HELLO may be on its way, and the coordinator would otherwise register a worker that
        // has left. A GOODBYE from a peer it does not know is ignored.
        if session.hasSaidHello { send(.goodbye(.init(reason: "shutting down"))) }
        stop(nil)
    }

    /// The handshake with the coordinator failed: this worker cannot join as configured.
    func refuse(_ reason: String) {
        guard phase != .stopped else { return }
        logger.error("cannot join: \(reason)")
        stop(BusError(code: .refused, message: reason))
    }

    func stop(_ error: BusError?) {
        // A last checkpoint, unless a dispatch is still in hand (then the previous one stands: see `checkpoint()`).
        writeCheckpointIfStale()
        session.stopped()
        pendingStop(error)
    }
}
