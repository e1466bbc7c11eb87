import Flux
import FluxBusProtocol

/// One dispatch as a worker runs it: the plan steps of the stores it hosts, and what is known so far about every
/// store those steps wait for, local or remote.
struct LocalDispatch {
    /// What a dependency did in this dispatch, and its output.
    struct Outcome {
        let status: OutcomeStatus
        let message: String
        let output: Value?
    }

    let sequence: UInt64
    let action: AnyAction
    /// The hosted stores' steps that have not run yet, in plan order.
    var remaining: [PlanStep]
    /// Store → outcome, for hosted stores that ran and for remote stores released by the coordinator.
    var outcomes: [String: Outcome] = [:]
    /// Every result this worker produced for the dispatch, for re-acknowledging duplicates.
    var results: [StoreResult] = []
    /// Run from the coordinator's history: the dispatch has completed, so nothing is acknowledged.
    var isReplay = false
    /// When this worker began it, to tell a dispatch waiting for a release from one the bus has left behind.
    let begunAt: MonotonicTime

    init(action message: Message.Action, at now: MonotonicTime, hosted: (String) -> Bool) {
        begunAt = now
        sequence = message.sequence
        action = AnyAction(name: message.actionType, json: message.payload, error: message.error.map(ActionError.init))
        remaining = message.plan.filter { hosted($0.store) }
    }

    /// Records what the coordinator released (or what the history recorded) for remote stores.
    mutating func learn(_ outputs: [StoreOutput]) {
        for output in outputs where outcomes[output.store] == nil {
            outcomes[output.store] = Outcome(status: output.status, message: output.message, output: output.output.map { .encoded($0) })
        }
    }

    /// The first remaining step whose dependencies are all settled, with the dependency that blocks it, if any.
    func nextRunnable() -> (index: Int, blockedBy: (store: String, status: OutcomeStatus)?)? {
        for (index, step) in remaining.enumerated() {
            let settled = step.waitsFor.compactMap { dependency in outcomes[dependency].map { (dependency, $0.status) } }
            guard settled.count == step.waitsFor.count else { continue }
            return (index, settled.first { $0.1 != .ok }.map { (store: $0.0, status: $0.1) })
        }
        return nil
    }
}
