import Flux
import FluxBusProtocol

/// One dispatch as a worker runs it. The whole plan goes through a ``DependencyExecution``, which hands out the
/// stores that run here in dependency order and records the others as the coordinator releases them (or the history
/// recorded them); the outputs the handlers here read are kept beside it.
///
/// A store here never reads the local outcome of a dependency: it waits for the outcome the coordinator released
/// (or recorded), even when the dependency runs here too. Only the coordinator knows the outcome every replica of a
/// dependent will read: it may have written this worker off and settled the dependency as lost, and a replica
/// elsewhere, or one replaying the history later, then reads that (docs/ARCHITECTURE.md, "One outcome per dependency").
struct LocalDispatch {
    /// A runnable store, with its dependencies under their own names.
    struct Runnable {
        let store: String
        let waitsFor: [String]
        /// Why it is skipped instead of run: a dependency did not succeed.
        let blockedBy: String?
    }

    let sequence: UInt64
    let action: AnyAction
    /// The action's fields as the log holds them, for the worker's log chain.
    let logged: BatchAction
    /// Its plan as the log holds it: an entry at this sequence with another plan is another entry.
    let plan: [PlanStep]
    /// The epoch of the coordinator that sent it; a re-send under a later epoch moves it there.
    var epoch: UInt64
    /// The plan's run: what is settled, and which store here may go next. A dependency that runs here appears twice:
    /// as itself, which runs here, and as ``PreparedPlan/released(_:)``, which settles by the coordinator's word.
    private var execution: DependencyExecution
    /// The planned stores that run here: hosted, and not brought past this sequence by a snapshot. Arrays, not sets:
    /// a plan names a few stores, and a replay builds one of these per action.
    private var local: [String]
    /// Dependencies that have a released step here.
    private var releasedHere: [String]
    /// Store → the output the coordinator released for it, for the stores waiting for it.
    private var outputs: [String: Value] = [:]
    /// Every result this worker produced for the dispatch, for re-acknowledging duplicates.
    private(set) var results: [StoreResult] = []
    /// Run from the coordinator's history: the dispatch has completed, so nothing is acknowledged.
    var isReplay = false
    /// Stores that run here whose recorded outcome is unknown: a replay still reports their results, which tell the
    /// coordinator what happened.
    private(set) var unknownOnTheBus: Set<String> = []
    /// When this worker began it, to tell a dispatch waiting for a release from one the bus has left behind.
    let begunAt: MonotonicTime
    /// What is measured of it when its ACTION is traced; nil (and nothing measured) otherwise.
    var timing: DispatchTiming?

    /// The dispatch of one action, given by its fields, its plan as `prepared` derived it.
    init(
        sequence: UInt64, epoch: UInt64, actionType: String, payload: [UInt8], error: String?, traceparent: String,
        prepared: PreparedPlan, at now: MonotonicTime
    ) {
        begunAt = now
        if !traceparent.isEmpty { timing = DispatchTiming(receivedAt: now) }
        self.sequence = sequence
        self.epoch = epoch
        plan = prepared.plan
        action = AnyAction(name: actionType, json: payload, error: error.map(ActionError.init))
        logged = BatchAction(actionType: actionType, payload: payload, error: error)
        local = prepared.local
        releasedHere = prepared.releasedHere
        execution = prepared.execution
    }

    /// Records what the coordinator released (or what the history recorded). The first record of a store counts; a
    /// store that runs here finishes only by running here, but the stores here waiting for it read this record.
    mutating func learn(_ released: [StoreOutput]) {
        for output in released {
            var recorded = false
            if releasedHere.contains(output.store) {
                recorded = execution.record(PreparedPlan.released(output.store), output.settlement)
            }
            if !local.contains(output.store) {
                recorded = execution.record(output.store, output.settlement) || recorded
            }
            if recorded, let bytes = output.output { outputs[output.store] = .encoded(bytes) }
            if isReplay, output.status == .unknown, local.contains(output.store) { unknownOnTheBus.insert(output.store) }
        }
    }

    /// Records every planned store that neither runs here nor has settled as `settlement`: a replay's entry has all
    /// the outcomes there will ever be.
    mutating func settleTheRest(as settlement: DependencyExecution.Settlement) {
        for step in execution.plan where !local.contains(step.store) { execution.record(step.store, settlement) }
    }

    /// The next store here whose dependencies have all settled, handed out once; ``Runnable/blockedBy`` says when
    /// it must be skipped instead of run. Record its result with ``record(_:output:)``.
    mutating func nextRunnable() -> Runnable? {
        guard let ready = execution.nextRunnable() else { return nil }
        let blocked = ready.blockedBy.map {
            DependencyExecution.Blocker(dependency: PreparedPlan.original($0.dependency), settlement: $0.settlement).reason
        }
        return Runnable(store: ready.store, waitsFor: ready.step.waitsFor.map(PreparedPlan.original), blockedBy: blocked)
    }

    /// The outputs of the stores `step` waits for, for its handler.
    func outputs(for step: Runnable) -> [String: Value] {
        var found: [String: Value] = [:]
        for dependency in step.waitsFor { found[dependency] = outputs[dependency] }
        return found
    }

    /// What `step` read of its dependencies (``ReadDigest``): whether it runs, and the outputs it is handed.
    func readDigest(for step: Runnable) -> UInt64 {
        if step.waitsFor.isEmpty { return ReadDigest.none }
        if step.blockedBy != nil { return ReadDigest.skipped }
        return ReadDigest.ran(reading: step.waitsFor.map { dependency in
            guard case .encoded(let bytes)? = outputs[dependency] else { return (dependency, nil) }
            return (dependency, bytes)
        })
    }

    /// Records a store's result here. The stores here waiting for it wait on for the coordinator's word.
    mutating func record(_ result: StoreResult) {
        execution.record(result.store, result.settlement)
        results.append(result)
    }

    /// Whether every store that runs here has its result.
    var isFinished: Bool { execution.isFinished }

    /// A snapshot brought `store` past this dispatch: if it has not run, it no longer does, and the stores waiting
    /// for it wait for its recorded outcome, as they do anyway.
    mutating func stopRunning(_ store: String) {
        guard let position = local.firstIndex(of: store) else { return }
        local.remove(at: position)
        execution.stopRunningHere(store)
    }

    /// The action is poisoned for `store`: if this is that dispatch and the store has not run, it no longer does,
    /// and the stores here waiting for it read its recorded outcome.
    mutating func stopRunning(_ store: String, at sequence: UInt64) {
        if sequence == self.sequence, !results.contains(where: { $0.store == store }) { stopRunning(store) }
    }
}
