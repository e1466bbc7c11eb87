import Flux
import FluxBusProtocol

/// One dispatch as a worker runs it. The whole plan goes through a ``DependencyExecution``, which hands out the
/// stores that run here in dependency order and records the others as the coordinator releases them (or the history
/// recorded them); the outputs the handlers here read are kept beside it.
struct LocalDispatch {
    let sequence: UInt64
    let action: AnyAction
    /// The action's fields as the log holds them, for the worker's log chain.
    let logged: BatchAction
    /// The plan's run: what is settled, and which store here may go next.
    private var execution: DependencyExecution
    /// The planned stores that run here: hosted, and not brought past this sequence by a snapshot.
    private var local: Set<String>
    /// Store → the output it published, for settled stores that published one.
    private var outputs: [String: Value] = [:]
    /// Every result this worker produced for the dispatch, for re-acknowledging duplicates.
    private(set) var results: [StoreResult] = []
    /// Run from the coordinator's history: the dispatch has completed, so nothing is acknowledged.
    var isReplay = false
    /// When this worker began it, to tell a dispatch waiting for a release from one the bus has left behind.
    let begunAt: MonotonicTime

    init(action message: Message.Action, at now: MonotonicTime, hosted: (String) -> Bool) {
        begunAt = now
        sequence = message.sequence
        action = AnyAction(name: message.actionType, json: message.payload, error: message.error.map(ActionError.init))
        logged = BatchAction(actionType: message.actionType, payload: message.payload, error: message.error)
        local = Set(message.plan.map(\.store).filter(hosted))
        execution = DependencyExecution(
            message.plan.map { DependencyExecution.Step(store: $0.store, waitsFor: $0.waitsFor) }, runsHere: local.contains)
    }

    /// Records what the coordinator released (or what the history recorded) for stores that do not run here. The
    /// first record of a store counts; a store that runs here settles only by running here.
    mutating func learn(_ released: [StoreOutput]) {
        for output in released where !local.contains(output.store) {
            if execution.record(output.store, output.settlement), let bytes = output.output {
                outputs[output.store] = .encoded(bytes)
            }
        }
    }

    /// Records every planned store that neither runs here nor has settled as `settlement`: a replay's entry has all
    /// the outcomes there will ever be.
    mutating func settleTheRest(as settlement: DependencyExecution.Settlement) {
        for step in execution.plan where !local.contains(step.store) { execution.record(step.store, settlement) }
    }

    /// The next store here whose dependencies have all settled, handed out once; ``DependencyExecution/Ready/blockedBy``
    /// says when it must be skipped instead of run. Record its result with ``record(_:output:)``.
    mutating func nextRunnable() -> DependencyExecution.Ready? { execution.nextRunnable() }

    /// The outputs of the stores `step` waits for, for its handler.
    func outputs(for step: DependencyExecution.Step) -> [String: Value] {
        var found: [String: Value] = [:]
        for dependency in step.waitsFor { found[dependency] = outputs[dependency] }
        return found
    }

    /// Records a store's result here, which releases the stores waiting for it.
    mutating func record(_ result: StoreResult, output: Value?) {
        execution.record(result.store, result.settlement)
        outputs[result.store] = output
        results.append(result)
    }

    /// Whether every store that runs here has its result.
    var isFinished: Bool { execution.isFinished }

    /// A snapshot brought `store` past this dispatch: if it has not run, it no longer does, and the stores waiting
    /// for it wait for its recorded outcome instead, like a remote store's.
    mutating func stopRunning(_ store: String) {
        guard local.remove(store) != nil else { return }
        execution.stopRunningHere(store)
    }
}
