import Flux
import FluxBusProtocol
import Logging

/// Outcomes: how a store's replicas settle into the one outcome its dependents read, why that outcome is logged
/// before any of them reads it, and how an outcome reported as unknown becomes known.
extension CoordinatorEngine {
    /// Records a store's outcome once all its replicas answered (or were lost). When stores wait for it, the outcome
    /// is a decision every replica of theirs will read, now or replaying the history: it is logged, and released to
    /// their workers (those hosting the store too) only once the log has it on disk (``releaseDecisions()``), so that
    /// a restart dispatching the action again releases the same outcome.
    func settle(_ store: String, at index: Int) {
        let flight = flights[index]
        guard let position = flight.position(of: store), flight.steps[position].settled == nil else { return }
        // Field by field: a copy of the step retained and released each of its lists, once per settled store.
        let lost = flight.steps[position].lost
        let lostReason = lost.isEmpty ? "no live replica" : lost.map(\.reason).joined(separator: "; ")
        var output = InFlightDispatch.settle(store, results: flight.steps[position].results, lostReason: lostReason)
        if output.status == .unknown, configuration.lostDependencyPolicy == .runWithoutOutput {
            // Its dependents run without its output. The record says so, so that a replay does the same.
            output = StoreOutput(store: store, status: .ok, message: "lost (\(lostReason)); released without output")
        }
        decide(output, at: index)
    }

    /// Fixes a store's recorded outcome for a dispatch in flight and, if stores wait for it, logs it and releases it
    /// once the log has committed it (``releaseDecisions()``); one recovered from the log goes out at once. Every
    /// decision waits for the commit, also one made of replicas' results: the simulator found runs (seeds 393 and 671
    /// of 176…675) where a restart, its replicas gone or changed meanwhile, would decide otherwise.
    func decide(_ output: StoreOutput, at index: Int, recorded: Bool = false) {
        guard let position = flights[index].position(of: output.store) else { return }
        flights[index].decide(output, at: position)
        guard flights[index].hasDependents(output.store) else { return }
        if recorded { return release(output.store, at: index) }
        log.recordDecision(output, sequence: flights[index].sequence)
        undeliveredDecisions.append((flights[index].sequence, output.store))
    }

    /// The replicas of a completed dispatch whose results say they read other outcomes of their dependencies than the
    /// dispatch records (``ReadDigest``), named; nil when none did. With every decision on disk before its RELEASE,
    /// none should: a difference is a worker that ran a store on another outcome than the bus's, and the answer
    /// would not be true of it.
    func misreadDependencies(in flight: InFlightDispatch) -> [String]? {
        #if DEBUG
        if plantedBug == .coordinatorIgnoresWhatDependentsRead { return nil }
        #endif
        var misread: [String] = []
        for (step, progress) in zip(flight.plan, flight.steps) where !step.waitsFor.isEmpty
        && progress.results.contains(where: { $0.result.readDigest != ReadDigest.none }) {
            let recorded = ReadDigest.of(step.waitsFor.compactMap { dependency in
                flight.position(of: dependency).flatMap { flight.steps[$0].settled }
            })
            for replica in progress.results where replica.result.readDigest != ReadDigest.none
            && replica.result.readDigest != recorded {
                misread.append("store `\(step.store)` on worker `\(replica.worker)`")
            }
        }
        return misread.isEmpty ? nil : misread
    }

    /// Replicas read outcomes the log does not record. The coordinator stops before it tells anyone of the dispatch,
    /// and stops again at every restart until those replicas start over.
    func stopOnMisread(_ misread: [String], sequence: UInt64) {
        let failure = BusError(code: .storage, message: "\(misread.joined(separator: ", ")) applied #\(sequence) reading "
            + "outcomes of its dependencies that this coordinator's log does not record (its data directory was replaced "
            + "or restored, or the worker ran a store on outcomes the coordinator never released). Restart each worker "
            + "named with empty state (remove its --data-dir checkpoint) so that it replays the log's history, then start "
            + "the coordinator again")
        logger.critical("replicas read outcomes the log does not record; stopping", metadata: [
            "seq": "\(sequence)", "replicas": "\(misread.joined(separator: "; "))",
        ])
        stopOnStorageFailure(failure, because: "found replicas that read outcomes its log does not record")
    }

    /// Sends the decisions the log has just committed.
    func releaseDecisions() {
        let decisions = undeliveredDecisions
        undeliveredDecisions.removeAll()
        for (sequence, store) in decisions {
            if let index = flights.index(of: sequence) { release(store, at: index) }
        }
    }

    /// Sends a store's decided outcome to the workers whose stores wait for it: one RELEASE per worker.
    private func release(_ store: String, at index: Int) {
        guard let position = flights[index].position(of: store), let output = flights[index].steps[position].settled else { return }
        flights[index].markReleased(at: position)
        let waiting = Set(flights[index].dependents(of: store).flatMap { membership.connectedReplicas(of: $0) })
        let trace = flights.trace(of: flights[index].sequence)
        for worker in waiting.sorted() {
            send(.release(.init(epoch: epoch, sequence: flights[index].sequence, outputs: [output])), toWorker: worker)
            trace?.releases.append(.init(store: store, worker: worker, commit: lastTimedCommit, sentAt: clockNow()))
        }
    }

    /// A replica's results for a completed dispatch, from a late ACK (even one written off meanwhile: it is the
    /// same routing id) or from replaying an entry recorded as unknown: where the answer said unknown, it now says
    /// what the replica did. The recorded decision stands; only the answer learns.
    func learnLateOutcomes(_ ack: Message.Ack, from worker: String) {
        for result in ack.results {
            guard let requestID = unknownOutcomes.resolve(sequence: ack.sequence, store: result.store, worker: worker) else { continue }
            let known = Outcome(store: result.store, worker: worker, status: result.status, message: result.message, digest: result.digest)
            guard rewriteAnswer(requestID, sequence: ack.sequence, { $0.resolving(sequence: ack.sequence, with: known) }) else { continue }
            logger.info("an unknown outcome is known now", metadata: [
                "seq": "\(ack.sequence)", "store": "\(result.store)", "worker": "\(worker)", "status": "\(result.status)",
                "request": "\(requestID)",
            ])
        }
    }

    /// Rewrites the answer recorded for a request id; false when the log no longer has one.
    @discardableResult
    func rewriteAnswer(_ requestID: String, sequence: UInt64, _ change: (Message) -> Message) -> Bool {
        var logged = unflushedResults[requestID]
        if logged == nil {
            let read = readLog(to: "rewrite a request's answer", otherwise: "the answer stays as it was recorded", [
                "request": "\(requestID)", "seq": "\(sequence)",
            ]) { try $0.request(requestID) }
            guard case .success(let request) = read else { return false }
            logged = request
        }
        guard let logged, let recorded = logged.answer else { return false }
        let answer = change(recorded)
        let first = if case .batchResult(let batch) = answer { batch.firstSequence } else { sequence }
        log.recordAnswer(answer, for: requestID, sequence: first)
        unflushedResults[requestID] = LoggedRequest(answer: answer, fingerprint: logged.fingerprint, actionType: logged.actionType)
        return true
    }

    /// A digest reported outside a dispatch's completion (a replica that caught up reports its digests on going live,
    /// a late ACK) against the other replicas' digests for the same store and sequence: a difference is a divergence,
    /// seen now rather than at the store's next dispatch.
    func checkReportedDigest(_ result: StoreResult, sequence: UInt64, worker: String) {
        guard result.digest != 0, sequence <= lastCompleted else { return }
        let differing = membership.replicasReporting(result.store, at: sequence).filter { $0.digest != 0 && $0.digest != result.digest }
        guard !differing.isEmpty else { return }
        membership.markDiverged(result.store, at: sequence)
        logger.error("replicas diverged", metadata: [
            "store": "\(result.store)", "seq": "\(sequence)",
            "digests": "\(([(worker, result.digest)] + differing.map { ($0.worker, $0.digest) }).map { "\($0.0)=\(StateDigest.hex($0.1))" }.joined(separator: ","))",
        ])
    }

    /// The outcomes other than ok that the log recorded for `range`: a batch's actions that completed before a
    /// restart. The record has one outcome per store, not per replica, so these name no worker.
    func recordedFailures(_ range: Range<UInt64>) -> [BatchFailure] {
        guard !range.isEmpty else { return [] }
        let read = readLog(to: "answer for a batch's actions that completed before a restart", otherwise: "they are answered as unknown", [
            "from": "\(range.lowerBound)", "through": "\(range.upperBound - 1)",
        ]) { try $0.entries(in: range.lowerBound...range.upperBound - 1, maximum: range.count) }
        let entries = (try? read.get()) ?? []
        let missing = switch read {
        case .success: "completed before the coordinator restarted, and its record is no longer in the log"
        case .failure(let error): "completed before the coordinator restarted, and its record could not be read from the log (\(error))"
        }
        var failures: [BatchFailure] = []
        var recorded = Set<UInt64>()
        for entry in entries {
            recorded.insert(entry.sequence)
            for output in entry.outputs where output.status != .ok {
                failures.append(BatchFailure(sequence: entry.sequence, outcome: Outcome(
                    store: output.store, worker: "", status: output.status, message: output.message, digest: 0)))
            }
        }
        for sequence in range where !recorded.contains(sequence) {
            failures.append(BatchFailure(sequence: sequence, outcome: Outcome(
                store: "", worker: "", status: .unknown, message: missing, digest: 0)))
        }
        return failures.sorted { $0.sequence < $1.sequence }
    }

    /// What a batch reports of a dispatch: the outcomes of the stores that did not settle ok. A replica lost beside
    /// one that applied the action leaves its store ok, as a single dispatch's answer merges it; counted as a
    /// failure, it made a batch report stores unknown that every live replica applied.
    func batchFailures(_ outcomes: [Outcome], of flight: InFlightDispatch) -> [Outcome] {
        let notOK = outcomes.filter { $0.status != .ok }
        guard !notOK.isEmpty else { return [] }
        let settledOK = zip(flight.plan, flight.steps).compactMap { $1.settled?.status == .ok ? $0.store : nil }
        return notOK.filter { !settledOK.contains($0.store) }
    }
}
