import Flux
import FluxBusProtocol

/// Plans: which stores take part in an action, fixed and logged before its first ACTION is published, so that a
/// sequence names the same stores in every epoch that dispatches it.
extension CoordinatorEngine {
    /// Plans the next request, if it has no plans yet, and logs them; true if it did.
    func planNext() -> Bool {
        let made = queue.planNext { actions in
            var plans: [String: [PlanStep]] = [:]
            for action in actions where plans[action.actionType] == nil { plans[action.actionType] = plan(for: action.actionType) }
            return plans
        }
        guard let made else { return false }
        log.recordPlans(made.plans, request: made.first)
        return true
    }

    /// Every active store that handles the action type, dependencies first, each waiting for the planned stores it
    /// depends on.
    func plan(for actionType: String) -> [PlanStep] {
        let graph = membership.graph
        let participating = graph.order.filter { membership.stores[$0]?.handles(actionType) == true }
        let taking = Set(participating)
        return participating.map { PlanStep(store: $0, waitsFor: graph.dependencies(of: $0).filter(taking.contains)) }
    }

    /// Declared stores that handle the action type but cannot run it: they wait, directly or not, for a store no
    /// worker hosts. Their outcome is `skipped` (they never apply it), with the reason, so that a dispatch they miss
    /// does not read as a success. Decided when the dispatch is published, beside its plan, never at completion: the
    /// graph may change meanwhile, and a store in the plan is never "not ready" (the simulator, seed 36, caught an
    /// answer that listed a planned store both ok and not ready, after its dependency's replicas were lost).
    func notReadyOutcomes(for actionType: String, planned: [PlanStep] = []) -> [Outcome] {
        // The common case, every declared store active, costs one comparison per dispatch.
        guard membership.graph.order.count < membership.stores.count else { return [] }
        return membership.storesInOrder.compactMap { store in
            let name = store.declaration.name
            guard !membership.graph.contains(name), store.handles(actionType), !planned.contains(where: { $0.store == name })
            else { return nil }
            let missing = membership.undeclaredDependencies(of: name).map { "`\($0)`" }.joined(separator: ", ")
            return Outcome(
                store: name, worker: "", status: .skipped,
                message: "not ready: it waits for \(missing), which no worker hosts; start a worker that hosts it, or correct the "
                    + "store's dependencies", digest: 0)
        }
    }

    /// Why no store runs an action of this type, for a refusal or a BATCH_RESULT failure.
    func unhandledReason(for actionType: String) -> String {
        let notReady = notReadyOutcomes(for: actionType)
        guard notReady.isEmpty else {
            return "no store can run `\(actionType)`: " + notReady.map { "store `\($0.store)` is \($0.message)" }.joined(separator: "; ")
        }
        return "no store on the bus handles action type `\(actionType)`; check its name, or start a worker with a store that handles it"
    }

    /// A plan with the live replicas each store waits for: none for a store that has none now.
    func participants(in plan: [PlanStep]) -> (plan: [PlanStep], awaiting: [[String]]) {
        (plan, plan.map { membership.liveReplicas(of: $0.store) })
    }
}
