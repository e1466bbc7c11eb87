import FluxBusProtocol
import Logging

/// The coordinator's clocks: what each tick does (heartbeats, liveness, re-sends, deadlines, compaction), and how the
/// clocks restart after the process itself stalled.
extension CoordinatorEngine {
    /// Runs every tick: heartbeats, liveness, re-sends and deadlines.
    func tick() {
        // A shell that sets no timer for the held COMPLETEDs still publishes them, a tick late at most.
        if let until = heldCompletionsUntil, until <= now { releaseHeldCompletions() }
        let joining = membership.workers.values.contains { $0.state == .catchingUp }
        // While a worker is joining, beat on every tick so that its first message on SUB comes soon.
        if joining || now - lastPublishAt >= configuration.heartbeatInterval {
            publish(.heartbeat(.init(epoch: epoch, sequence: lastSequence)))
        }
        for worker in membership.workers.values where worker.state == .live || worker.state == .catchingUp {
            if now - worker.lastHeard > deadline {
                markLost(worker.id, reason: "silent for \((now - worker.lastHeard).milliseconds) ms")
            }
        }
        checkInFlight()
        policing.prune(at: now)
        checkRecovery()
        compactIfDue()
        for requester in stateQueries.expire(at: now) {
            send(.error(.init(requestID: requester.requestID, code: .timeout,
                              message: "the replica did not answer the state request in time (the coordinator's "
                                  + "--state-timeout for its first answer, --ack-timeout between chunks); try again")),
                 to: requester.routingID)
        }
        flushLog()
        syncIfBatched()
        pump()
    }

    /// Restarts the clocks this process could not watch while it stalled: peers' silence and dispatch deadlines.
    func resumeAfterStall(_ gap: Duration) {
        logger.warning("this coordinator did not run for a while; peers' silence counts from now", metadata: [
            "stalledMillis": "\(gap.milliseconds)",
        ])
        membership.forgiveSilence(until: now)
        idClaims.forgetClaims()
        for index in flights.openIndices {
            flights[index].deadline = flights[index].deadline.advanced(by: gap)
            flights[index].nextResend = min(flights[index].nextResend.advanced(by: gap), now)
        }
    }
}
