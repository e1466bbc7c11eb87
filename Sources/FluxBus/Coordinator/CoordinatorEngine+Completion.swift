import Flux
import FluxBusProtocol
import Logging

/// Completing dispatches: each in order once every planned store has settled, its COMPLETED published and its
/// outcomes recorded, and each request answered once all of its dispatches have completed.
extension CoordinatorEngine {
    /// Completes the dispatches in flight that can, in order, and answers each request once all of its have.
    func completeIfDone() {
        // A request with nothing to run (all of it completed before a restart) ends before any dispatch does.
        answerFinished(lastOutcomes: [])
        var progressed = false
        while true {
            // Nothing is told of a dispatch whose replicas read other outcomes than it records.
            if let head = flights.head, flights[head].isComplete, let misread = misreadDependencies(in: flights[head]) {
                return stopOnMisread(misread, sequence: flights[head].sequence)
            }
            guard let flight = flights.takeCompletedHead() else { break }
            answerFinished(lastOutcomes: complete(flight))
            progressed = true
        }
        // The next dispatch is the oldest in flight now: its deadline and re-sends count from here.
        guard progressed, let head = flights.head else { return }
        flights[head].deadline = now.advanced(by: configuration.ackTimeout)
        flights[head].nextResend = now.advanced(by: configuration.firstResend)
    }

    /// Answers the oldest requests in flight while all their dispatches have completed; the first gets the outcomes
    /// of the dispatch that completed last.
    private func answerFinished(lastOutcomes: [Outcome]) {
        var outcomes = lastOutcomes
        while true {
            let finished = flights.finishOldest()
            guard let finished else { return }
            answer(finished, lastOutcomes: outcomes)
            outcomes = []
        }
    }

    /// Records one completed dispatch, publishes COMPLETED, and returns its outcomes.
    private func complete(_ flight: InFlightDispatch) -> [Outcome] {
        var outcomes: [Outcome] = []
        outcomes.reserveCapacity(flight.plan.count)
        for (step, progress) in zip(flight.plan, flight.steps) {
            for replica in progress.results {
                let result = replica.result
                outcomes.append(Outcome(store: step.store, worker: replica.worker, status: result.status, message: result.message, digest: result.digest))
            }
            for (worker, reason) in progress.lost {
                outcomes.append(Outcome(store: step.store, worker: worker, status: .unknown, message: reason, digest: 0))
            }
            if progress.results.isEmpty, progress.lost.isEmpty {
                outcomes.append(Outcome(store: step.store, worker: "", status: .unknown, message: "no live replica", digest: 0))
            }
            checkDivergence(step.store, results: progress.results, sequence: flight.sequence)
        }
        // Stores that handle it but could not run say so; an action nothing handled has no outcome at all, which
        // clients show as `unhandled` (a batch lists it as a failure without a store).
        outcomes.append(contentsOf: flight.notReady)
        outcomes.append(contentsOf: joinedLateOutcomes(of: flight))
        lastCompleted = flight.sequence
        let micros = now.microseconds(since: flight.startedAt)
        let completed = Message.Completed(
            epoch: epoch, sequence: flight.sequence, actionType: flight.action.actionType, elapsedMicros: micros,
            outcomes: outcomes)
        log.complete(ReplayEntry(
            epoch: epoch, sequence: flight.sequence, actionType: flight.action.actionType, payload: flight.action.payload,
            error: flight.action.error, plan: flight.plan, outputs: flight.steps.map { $0.settled! }))
        if flights.oldestIsBatch {
            let failures = outcomes.isEmpty
                ? [Outcome(store: "", worker: "", status: .skipped, message: unhandledReason(for: flight.action.actionType), digest: 0)]
                : batchFailures(outcomes, of: flight)
            flights.recordFailures(failures.map { BatchFailure(sequence: flight.sequence, outcome: $0) })
        }
        publish(.completed(completed))
        guard logsDispatches else { return outcomes }
        logger.debug("dispatch completed", metadata: [
            "seq": "\(flight.sequence)", "action": "\(flight.action.actionType)", "micros": "\(micros)",
        ])
        return outcomes
    }

    /// Sends the request's answer to everyone who asked under its id, and records it for retries.
    private func answer(_ request: CurrentRequest, lastOutcomes: [Outcome]) {
        let micros = now.microseconds(since: request.startedAt)
        let trace = request.trace.map { TraceWaterfall(trace: $0, answeredAt: clockNow()).steps } ?? []
        func message(_ requestID: String) -> Message {
            request.isBatch
                ? .batchResult(.init(
                    requestID: requestID, epoch: epoch, firstSequence: request.firstSequence, count: UInt32(request.count),
                    elapsedMicros: micros, failures: request.failures, outcomes: lastOutcomes))
                : .result(.init(
                    requestID: requestID, epoch: epoch, sequence: lastCompleted, elapsedMicros: micros, outcomes: lastOutcomes,
                    trace: trace))
        }
        for requester in request.requesters {
            send(message(requester.requestID), to: requester.routingID)
        }
        // A request recovered from the log may have no requester left; its id still gets its answer.
        guard !request.requestID.isEmpty else { return }
        let answer = message(request.requestID)
        log.recordAnswer(answer, for: request.requestID, sequence: request.firstSequence)
        unflushedResults[request.requestID] = LoggedRequest(
            answer: answer, fingerprint: request.fingerprint, actionType: request.actionType)
        unknownOutcomes.remember(answer, requestID: request.requestID)
    }

    /// Replicas that applied the same sequence must report the same digest; a difference is logged and shown.
    private func checkDivergence(_ store: String, results: [ReplicaResult], sequence: UInt64) {
        guard Self.digestsDiffer(results) else { return }
        membership.markDiverged(store, at: sequence)
        logger.error("replicas diverged", metadata: [
            "store": "\(store)", "seq": "\(sequence)",
            "digests": "\(results.map { "\($0.worker)=\(StateDigest.hex($0.result.digest))" }.joined(separator: ","))",
        ])
    }

    /// Whether the results that report a digest report more than one. Compared to the first, by index and without
    /// building a set: this runs per store of every completed action, and a lazy filter and map cost it about 500
    /// instructions.
    private static func digestsDiffer(_ results: [ReplicaResult]) -> Bool {
        var first: UInt64?
        for index in results.indices where results[index].result.status != .unknown {
            let digest = results[index].result.digest
            if let first, digest != first { return true }
            first = first ?? digest
        }
        return false
    }
}
