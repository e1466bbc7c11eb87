import Flux
@testable import FluxBus
import FluxBusProtocol

/// The invariants, checked after every step of a simulated run, against a model built from what the coordinator
/// published and what clients were told:
/// - one total order: a sequence, once published, always names the same action, planned for the same stores;
/// - a retried request id is one action: an action never gets two sequences;
/// - no store applies a sequence twice, or out of order: a replica of an independent store holds exactly the
///   history the total order gives it, up to the sequence it applied;
/// - within each dispatch the dependency order holds: the audit store appends the ledger's length as of the same
///   dispatch, so replicas of it agree;
/// - replicas that reached the same sequence hold the same state;
/// - no request whose result a client received is lost, across coordinator crashes;
/// - outcomes tell the truth: a store reported failed or skipped never applies the action, one reported ok never
///   fails or skips it (``OutcomeTruth``);
/// - no request is left without an answer when the coordinator stops on a storage failure.
/// Liveness is checked by the run: once faults stop, every request completes within a bound.
final class SimChecker {
    unowned var cluster: SimCluster!
    private(set) var violation: String?
    /// Sequence → action id, as published.
    private(set) var order: [UInt64: UInt32] = [:]
    /// Sequence → the stores its plan named.
    private var planned: [UInt64: Set<String>] = [:]
    private var sequenceOfAction: [UInt32: UInt64] = [:]
    private var actionOfPayload: [[UInt8]: UInt32] = [:]
    /// Results clients received: sequence → action id; and each answered request's result.
    private(set) var acknowledged: [UInt64: UInt32] = [:]
    private(set) var answers: [String: (sequence: UInt64, outcomes: [Outcome])] = [:]
    /// Every answer to a single DISPATCH, in order, by request id: a request asked again shows how its outcomes moved.
    private(set) var answerHistory: [String: [[Outcome]]] = [:]
    /// Sequence → the epochs it was published under: more than one when a restarted coordinator dispatched it again.
    private(set) var publishedEpochs: [UInt64: Set<UInt64>] = [:]
    private var completedStream = CompletedStream()
    private var truth = OutcomeTruth()
    private var nextActionID: UInt32 = 0
    private(set) var requests = 0
    private var trace: [() -> String] = []
    private var traceStart = 0
    static let traceLength = 60

    func newActionID() -> UInt32 {
        nextActionID += 1
        return nextActionID
    }

    func fail(_ message: String) {
        if violation == nil { violation = message }
    }

    /// Adds a step to the trace; it is described only if a failure prints it.
    func note(_ line: @escaping @autoclosure () -> String) {
        let time = cluster?.now ?? 0
        let entry = { "\(time) µs  \(line())" }
        if trace.count < Self.traceLength { trace.append(entry) } else {
            trace[traceStart] = entry
            traceStart = (traceStart + 1) % Self.traceLength
        }
    }

    /// The last steps, oldest first.
    var recentSteps: [String] { (trace[traceStart...] + trace[..<traceStart]).map { $0() } }

    // MARK: - What happened

    func requested(_ request: SimClient.Request) {
        requests += 1
        for (payload, id) in zip(request.payloads, request.actionIDs) { actionOfPayload[payload] = id }
    }

    /// How much state moved in chunks: streamed headers, CHUNKs, installs, by kind (reported per run).
    var transfers: [String: Int] = [:]

    /// Counts what a worker sent that moves state.
    func workerSent(_ message: Message) {
        switch message {
        case .state(let state) where UInt64(state.state.count) < state.size: transfers["STATE streamed", default: 0] += 1
        case .chunk: transfers["CHUNK from workers", default: 0] += 1
        case .bundle, .actions, .acks, .completions:
            for inner in parts(of: message) { workerSent(inner) }
        default: break
        }
    }

    func coordinatorSent(_ message: Message) {
        switch message {
        case .snapshot(let snapshot) where UInt64(snapshot.state.count) < snapshot.size:
            transfers["SNAPSHOT streamed", default: 0] += 1
        case .chunk: transfers["CHUNK from the coordinator", default: 0] += 1
        case .action(let action): published(action)
        case .completed(let completed):
            if let violation = completedStream.published(completed) { fail(violation) }
        case .bundle, .actions, .acks, .completions:
            for inner in parts(of: message) { coordinatorSent(inner) }
        default: break
        }
    }

    /// The messages a BUNDLE or a run stands for, as a receiver's `decodeAll` takes it apart: every invariant is
    /// checked on each of them. One that does not take apart is an engine's bug, and fails the run.
    func parts(of message: Message, keepingAcks: Bool = false) -> [Message] {
        let codec = Codec()
        do {
            return try codec.decodeAll(codec.encode(message), keepingAcks: keepingAcks)
        } catch {
            fail("\(message.command) sent that does not take apart: \(error)")
            return []
        }
    }

    private func published(_ action: Message.Action) {
        guard let id = actionOfPayload[action.payload] else { return fail("#\(action.sequence) publishes a payload no client sent") }
        if let earlier = order[action.sequence], earlier != id {
            fail("one total order: #\(action.sequence) was action \(earlier), and is now published as action \(id)")
        }
        if let earlier = sequenceOfAction[id], earlier != action.sequence {
            fail("a retried request is one action: action \(id) has #\(earlier) and #\(action.sequence)")
        }
        let stores = Set(action.plan.map(\.store))
        if let earlier = planned[action.sequence], earlier != stores {
            fail("one plan per sequence: #\(action.sequence) was published for \(earlier.sorted()), and now for \(stores.sorted())")
        }
        order[action.sequence] = id
        sequenceOfAction[id] = action.sequence
        publishedEpochs[action.sequence, default: []].insert(action.epoch)
        planned[action.sequence] = Set(action.plan.map(\.store))
    }

    /// Requesters that were waiting when a storage failure stopped the coordinator, all answered.
    private(set) var answeredAtStorageStops = 0

    /// The coordinator stops on a storage failure: every requester still waiting must be answered by the effects of
    /// the same step (an ERROR, or its result), since no later answer can come from this coordinator.
    func stoppedOnStorageFailure(waiting: [Requester], effects: [CoordinatorEffect]) {
        let codec = Codec()
        var answered: Set<Requester> = []
        for case .send(let message, let routingID) in effects {
            for inner in (try? codec.decodeAll(codec.encode(message))) ?? [] {
                switch inner {
                case .error(let error): answered.insert(Requester(routingID: routingID, requestID: error.requestID))
                case .result(let result): answered.insert(Requester(routingID: routingID, requestID: result.requestID))
                case .batchResult(let result): answered.insert(Requester(routingID: routingID, requestID: result.requestID))
                default: break
                }
            }
        }
        for requester in waiting where !answered.contains(requester) {
            return fail("no request is left without an answer when the coordinator stops on a storage failure: request "
                + "\(requester.requestID) from \(String(decoding: requester.routingID, as: UTF8.self)) was not answered")
        }
        answeredAtStorageStops += waiting.count
    }

    func answered(_ request: SimClient.Request, sequence: UInt64, outcomes: [Outcome]) {
        let id = request.actionIDs[0]
        guard order[sequence] == id else {
            return fail("client was told request \(request.requestID) is #\(sequence), but #\(sequence) is action \(order[sequence].map(String.init) ?? "none")")
        }
        acknowledged[sequence] = id
        let replicas = outcomes.filter { !$0.worker.isEmpty }.map { "\($0.store)@\($0.worker)" }
        guard Set(replicas).count == replicas.count else {
            return fail("request \(request.requestID) was answered with a replica listed twice: \(replicas.sorted())")
        }
        answers[request.requestID] = (sequence, outcomes)
        answerHistory[request.requestID, default: []].append(outcomes)
        checkLedgerOutcomes(outcomes.map { (sequence, $0) }, of: request)
        if let lie = truth.told(request.requestID, sequence: sequence, outcomes: outcomes, planned: planned[sequence] ?? []) {
            fail(lie)
        }
    }

    /// A BATCH_RESULT: the batch's actions hold consecutive sequences from `sequence`, in the order sent, and its
    /// failures tell the truth.
    func answered(_ request: SimClient.Request, sequence: UInt64, count: Int, failures: [(UInt64, Outcome)]) {
        guard count == request.actionIDs.count else {
            return fail("batch \(request.requestID) of \(request.actionIDs.count) actions was answered for \(count)")
        }
        for (offset, id) in request.actionIDs.enumerated() {
            let at = sequence + UInt64(offset)
            guard order[at] == id else {
                return fail("batch \(request.requestID) was told its action \(id) is #\(at), but #\(at) is action \(order[at].map(String.init) ?? "none")")
            }
            acknowledged[at] = id
        }
        answers[request.requestID] = (sequence, failures.map(\.1))
        checkLedgerOutcomes(failures, of: request)
        for at in sequence..<sequence + UInt64(count) {
            let outcomes = failures.filter { $0.0 == at }.map(\.1)
            if let lie = truth.told(request.requestID, sequence: at, outcomes: outcomes, planned: planned[at] ?? []) {
                return fail(lie)
            }
        }
    }

    /// Outcomes tell the truth: the ledger refuses some ids on every replica, and accepts the rest.
    private func checkLedgerOutcomes(_ outcomes: [(sequence: UInt64, outcome: Outcome)], of request: SimClient.Request) {
        for (sequence, outcome) in outcomes where outcome.store == SimLedger.name && (outcome.status == .ok || outcome.status == .failed) {
            guard let id = order[sequence] else { continue }
            if (outcome.status == .failed) != Sim.ledgerRefuses(id) {
                fail("request \(request.requestID) was told the ledger \(outcome.status == .ok ? "accepted" : "refused") action \(id) on \(outcome.worker)")
            }
        }
    }

    /// At every start of the coordinator: what clients were told must still be in the log, or covered by a
    /// snapshot that compaction kept.
    func coordinatorStarted(recovered: LogRecovery, disk: SimulatedDisk) {
        completedStream.started(epoch: recovered.lastEpoch + 1, lastCompleted: recovered.lastCompleted)
        // A log is never silently shortened: what a coordinator starts from holds everything ever committed.
        if recovered.lastSequence < disk.highestCommitted {
            return fail("the log was silently shortened: it ends at #\(recovered.lastSequence), but #\(disk.highestCommitted) "
                + "had been committed")
        }
        let oldest = disk.oldestSequence ?? recovered.lastSequence + 1
        for (sequence, id) in acknowledged where sequence >= oldest {
            guard let row = disk.action(at: sequence), actionOfPayload[row.action.payload] == id else {
                return fail("an acknowledged request was lost: #\(sequence) (action \(id)) is not in the log after a restart")
            }
        }
        if let last = acknowledged.keys.max(), last > recovered.lastSequence {
            fail("an acknowledged request was lost: clients were told of #\(last), the log ends at #\(recovered.lastSequence)")
        }
    }

    /// What each worker's dependent store did in each dispatch, for the report of a divergence.
    private var auditRuns: [String: [UInt64: OutcomeStatus]] = [:]

    func applied(by worker: String, sequence: UInt64, store: String, status: OutcomeStatus) {
        if store == SimAudit.name { auditRuns[worker, default: [:]][sequence] = status }
        if let lie = truth.ran(store, sequence: sequence, on: worker, status: status) { fail(lie) }
    }

    /// The sequences where two workers' audit replicas did different things.
    private func auditDifferences(_ first: String, _ second: String) -> String {
        let a = auditRuns[first] ?? [:], b = auditRuns[second] ?? [:]
        let differing = Set(a.keys).union(b.keys).sorted().filter { a[$0] != b[$0] && a[$0] != nil && b[$0] != nil }
        return differing.prefix(4).map { "#\($0) \(first) \(a[$0]!) / \(second) \(b[$0]!)" }.joined(separator: ", ")
    }

    /// A power cut lost the log's commit after its ACTIONs went out. No one was told of them (the durability check
    /// holds every answer to the synced log), and once an operator lets the bus go on (`--new-bus`) their sequences
    /// go to other actions: what was published, and run, after `sequence` is forgotten.
    func lostPublished(after sequence: UInt64) {
        for (lost, id) in order where lost > sequence {
            order[lost] = nil
            planned[lost] = nil
            publishedEpochs[lost] = nil
            if sequenceOfAction[id] == lost { sequenceOfAction[id] = nil }
        }
        for worker in auditRuns.keys { auditRuns[worker] = auditRuns[worker]?.filter { $0.key <= sequence } }
        deferredReads.removeAll { $0.sequence > sequence }
        truth.forgetRuns(after: sequence)
        model.restart()
        for node in cluster.workers {
            // A worker down now holds it too if its checkpoint does: it may start from it (sweep seed 8757, where w2
            // restarted from a checkpoint at #116 that a power cut had taken from the log while w2 was down).
            let running = node.engine.map { engine in engine.storesByName.names.contains { engine.appliedSequence(of: $0) > sequence } }
            let kept = node.checkpoint.map { ([$0.lastApplied] + $0.stores.compactMap(\.appliedThrough)).max()! } ?? 0
            guard running ?? false || kept > sequence else { continue }
            holdingLost.insert(node.id)
        }
        note("the log lost what was published after #\(sequence)")
    }

    /// Workers that applied what a power cut then took from the log: they hold a history no one else will, until
    /// they start again empty (the coordinator refuses them meanwhile, and they serve no reads).
    private var holdingLost: Set<String> = []

    /// A worker starts, empty or from its checkpoint: what it ran after that is in no replica now. (It mattered once a
    /// power cut could lose a decision: run again, a dispatch may read another one.)
    func workerStarted(_ index: Int, from checkpoint: UInt64?) {
        let worker = cluster.workers[index].id
        if checkpoint == nil { holdingLost.remove(worker) }
        auditRuns[worker] = auditRuns[worker]?.filter { $0.key <= checkpoint ?? 0 }
        truth.forgetRuns(of: worker, after: checkpoint ?? 0)
        note("w\(index + 1) starts \(checkpoint.map { "from its checkpoint at #\($0)" } ?? "empty")")
    }

    // MARK: - Checking

    /// The stores' histories as the total order gives them.
    private var model = SimHistoryModel()

    /// The ids the ledger's handler traps on: no ledger replica ever holds them.
    func ledgerTraps(on ids: Set<UInt32>) { model.ledgerTraps = ids }

    /// Each store's history as first committed: decided once, it never changes (a damaged log that is restored brings
    /// the same back; the model does not forget it while the disk is damaged).
    private var histories: [String: StoreHistory] = [:]

    private func extendModel(through sequence: UInt64) -> Bool {
        for (store, history) in cluster.disk.histories {
            if let first = histories[store], first != history {
                fail("\(store)'s history was recorded as \(first) and is now \(history): it is decided once")
            }
            histories[store] = histories[store] ?? history
        }
        return model.extend(through: sequence, order: order, planned: planned, histories: histories)
    }

    /// Reads of a ledger at a sequence the log holds but a restarted coordinator has not published again yet (a
    /// worker welcomed after a retry took a lost sequence again with the same action): judged once it is.
    private var deferredReads: [(ids: [UInt32], sequence: UInt64, worker: String)] = []

    /// A ledger a client read through the coordinator must be the ledger the total order gives at its sequence.
    func readLedger(_ ids: [UInt32], at sequence: UInt64, from worker: String) {
        guard extendModel(through: sequence) else {
            if sequence <= cluster.disk.newestSequence ?? 0 { return deferredReads.append((ids, sequence, worker)) }
            return fail("a client read \(worker)'s ledger at #\(sequence), which was never published")
        }
        let expected = model.history(of: SimLedger.name, through: sequence)
        guard ids[...] == expected else {
            return fail("a client read \(worker)'s ledger at #\(sequence) with \(ids.count) ids ending \(Array(ids.suffix(3))); "
                + "the total order gives \(expected.count)")
        }
        transfers["states read by a client", default: 0] += 1
    }

    func checkAfterStep() {
        guard violation == nil else { return }
        if let half = cluster.disk.incompleteSnapshotsRecorded.first {
            return fail("the log recorded the snapshot \(half) before all its chunks were written and checked")
        }
        // A coordinator whose log failed refuses everything: only its exit lets the operator (or systemd) restart it.
        if cluster.coordinator?.storageFailed == true {
            return fail("the coordinator's log failed, and it did not stop: its .storageFailed effect never reached the shell")
        }
        for node in cluster.workers {
            guard let engine = node.engine else { continue }
            check(node.id, engine, SimLedger.self, ids: \.state)
            check(node.id, engine, SimTally.self, ids: \.state.ids)
        }
    }

    private func check<S: Store>(_ worker: String, _ engine: WorkerEngine, _ type: S.Type, ids: KeyPath<S, [UInt32]>) {
        guard let store = engine.storesByName[S.name]?.instance as? S, !holdingLost.contains(worker) else { return }
        let applied = engine.appliedSequence(of: S.name)
        guard extendModel(through: applied) else {
            return fail("\(worker)'s \(S.name) applied #\(applied), which was never published")
        }
        let expected = model.history(of: S.name, through: applied)
        let state = store[keyPath: ids]
        guard state.count == expected.count, state.last == expected.last else {
            return fail("\(worker)'s \(S.name) at #\(applied) holds \(state.count) ids ending \(Array(state.suffix(3))); "
                + "the total order gives \(expected.count) ending \(Array(expected.suffix(3)))")
        }
    }

    /// After the run: every replica's whole history against the model, and replicas of each store against each other.
    func checkAtEnd() {
        guard violation == nil else { return }
        let deferred = deferredReads
        deferredReads = []
        for read in deferred { readLedger(read.ids, at: read.sequence, from: read.worker) }
        if let read = deferredReads.first {
            return fail("a client read \(read.worker)'s ledger at #\(read.sequence), which was never published")
        }
        if let coordinator = cluster.coordinator,
            let violation = completedStream.unpublished(epoch: coordinator.epoch, lastCompleted: coordinator.lastCompleted)
        {
            return fail(violation)
        }
        var audits: [(String, UInt64, [Int])] = []
        for node in cluster.workers {
            guard let engine = node.engine else { continue }
            for name in [SimLedger.name, SimTally.name] {
                guard let store = engine.storesByName[name] else { continue }
                let state = (store.instance as? SimLedger)?.state ?? (store.instance as? SimTally)?.state.ids ?? []
                let applied = engine.appliedSequence(of: name)
                guard extendModel(through: applied) else {
                    return fail("\(node.id)'s \(name) applied #\(applied), which was never published")
                }
                if model.history(of: name, through: applied) != state[...] {
                    return fail("\(node.id)'s \(name) differs from the total order's history through #\(applied)")
                }
            }
            if let audit = engine.storesByName[SimAudit.name]?.instance as? SimAudit {
                audits.append((node.id, engine.appliedSequence(of: SimAudit.name), audit.state))
            }
        }
        for (first, second) in zip(audits, audits.dropFirst()) where first.1 == second.1 && first.2 != second.2 {
            let at = zip(first.2, second.2).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(first.2.count, second.2.count)
            fail("replicas of audit diverged at #\(first.1): from entry \(at), \(first.0) holds \(Array(first.2[at...].prefix(4))) "
                + "(\(first.2.count) in all), \(second.0) holds \(Array(second.2[at...].prefix(4))) (\(second.2.count) in all); "
                + "ran differently at: \(auditDifferences(first.0, second.0))")
        }
    }

    /// Every digest a replica reports is the digest of the state the total order gives through that sequence: the
    /// ledger's computed from its whole state, the tally's kept entry by entry, across snapshots, checkpoints and
    /// restarts alike.
    func acknowledged(_ ack: Message.Ack, by worker: String) {
        ackCoverage.checked += 1
        guard violation == nil, extendModel(through: ack.sequence) else { return }
        for result in ack.results where result.digest != 0 {
            guard let expected = model.digest(of: result.store, through: ack.sequence), result.digest != expected else { continue }
            return fail("\(worker) acknowledged #\(ack.sequence) with \(result.store)'s digest \(StateDigest.hex(result.digest)); "
                + "the total order's state through #\(ack.sequence) has \(StateDigest.hex(expected))")
        }
    }

    /// How many ACKs were held to the model, how many of them travelled in runs, and the runs that reached the
    /// coordinator.
    private(set) var ackCoverage = AckCoverage()

    /// Every ACK that `message` holds, a run's and a BUNDLE's included, held to the model: a worker joins the ACKs of
    /// a burst into runs, and each of them owes the same digest as an ACK sent alone.
    func acknowledgedAll(in message: Message, by worker: String) {
        switch message {
        case .ack(let ack): acknowledged(ack, by: worker)
        case .acks:
            for inner in parts(of: message) {
                ackCoverage.checkedInRuns += 1
                acknowledgedAll(in: inner, by: worker)
            }
        case .bundle:
            // Taken apart as the coordinator takes it: a run inside stays a run, and is counted as one.
            for inner in parts(of: message, keepingAcks: true) { acknowledgedAll(in: inner, by: worker) }
        default: break
        }
    }

    /// Counts the ACKS runs among what reached the coordinator's engine.
    func coordinatorReceived(_ frames: [[UInt8]]) { ackCoverage.received(frames) }

    static func brief(_ message: Message) -> String {
        switch message {
        case .action(let action): "ACTION #\(action.sequence)"
        case .ack(let ack): "ACK #\(ack.sequence) \(ack.results.map { "\($0.store):\($0.status)" }.joined(separator: ","))"
        case .release(let release): "RELEASE #\(release.sequence)"
        case .completed(let completed): "COMPLETED #\(completed.sequence)"
        case .actions(let run): "ACTIONS #\(run.firstSequence)+\(run.entries.count)"
        case .acks(let run): "ACKS #\(run.firstSequence)+\(run.count)"
        case .completions(let run): "COMPLETIONS #\(run.firstSequence)+\(run.count)"
        case .replay(let replay): "REPLAY \(replay.entries.first?.sequence ?? 0)…\(replay.entries.last?.sequence ?? 0)"
        case .fetch(let fetch): "FETCH \(fetch.from)…\(fetch.to)"
        case .heartbeat(let beat): "HEARTBEAT #\(beat.sequence)"
        case .result(let result): "RESULT #\(result.sequence) \(result.requestID)"
        case .dispatch(let dispatch): "DISPATCH \(dispatch.requestID)"
        case .snapshot(let snapshot): "SNAPSHOT \(snapshot.store)#\(snapshot.sequence) \(snapshot.state.count)/\(snapshot.size)"
        case .state(let state): "STATE \(state.requestID) \(state.store)#\(state.sequence) \(state.state.count)/\(state.size)"
        case .pull(let pull): "PULL \(pull.transfer)@\(pull.offset)+\(pull.maxBytes)"
        case .chunk(let chunk): "CHUNK \(chunk.transfer)@\(chunk.offset)+\(chunk.bytes.count)"
        default: "\(message.command)"
        }
    }
}
