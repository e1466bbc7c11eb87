import FluxBusProtocol
import Synchronization
import ZeroMQ

/// The loop's side of a ``ClientChannel``: receiving when no caller does, timeouts, refusal and the end. All of it
/// runs on the client's I/O loop thread.
extension ClientChannel {
    /// Receives for the waiting requests if the loop is the receiver, and watches the socket's descriptor exactly while
    /// it is: once no request waits, the next caller receives its own answer (unless callers never do).
    func loopReceive(_ scope: IOLoopScope) {
        var deliveries = Deliveries()
        let watches: Bool? = state.withLock { state in
            if state.receiver == .loop {
                state.drain(into: &deliveries)
                if state.waiters.isEmpty && callersReceive { state.receiver = .none }
            }
            let watches = state.receiver == .loop
            guard watches != state.loopWatches else { return nil }
            state.loopWatches = watches
            return watches
        }
        deliveries.perform(wakingCallerWith: wake)
        switch watches {
        case true?: scope.add(descriptor: descriptor) { [self, unowned scope] in loopReceive(scope) }
        case false?: scope.remove(descriptor: descriptor)
        case nil: break
        }
    }

    /// Fails the requests whose deadline has passed, and schedules the next sweep at the earliest deadline left.
    func sweep(_ scope: IOLoopScope) {
        var deliveries = Deliveries()
        state.withLock { state in
            state.expire(asOf: .now, into: &deliveries)
            state.sweepTimer?.cancel()
            state.sweepAt = state.nextDeadline
            state.sweepTimer = state.sweepAt.map { deadline in
                scope.schedule(after: ContinuousClock.now.duration(to: deadline)) { [self, unowned scope] in sweep(scope) }
            }
        }
        deliveries.perform(wakingCallerWith: wake)
        loopReceive(scope)
    }

    /// The handshake failed for good: every request waiting fails (see ``ClientState/refuse(because:into:)``), and
    /// every later one until a handshake succeeds.
    func refuse(_ reason: String, _ scope: IOLoopScope) {
        var deliveries = Deliveries()
        state.withLock { state in state.refuse(because: reason, into: &deliveries) }
        deliveries.perform(wakingCallerWith: wake)
        loopReceive(scope)
    }

    /// A connection to the coordinator came up or went down.
    func connectionChanged(up: Bool) {
        state.withLock { state in state.connectionChanged(up: up) }
    }

    /// The loop is stopping (the client closed, or the context was shut down): requests fail, and the socket, which
    /// the loop does not own, closes under the lock.
    func stop() {
        var deliveries = Deliveries()
        state.withLock { state in
            state.close(because: "the client is closed (its ZeroMQ context was shut down)", into: &deliveries)
            state.dealer.close()
        }
        deliveries.perform(wakingCallerWith: wake)
    }
}
