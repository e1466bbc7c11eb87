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

    /// A plan with the live replicas each store waits for: none for a store that has none now.
    func participants(in plan: [PlanStep]) -> (plan: [PlanStep], awaiting: [String: Set<String>]) {
        var awaiting: [String: Set<String>] = [:]
        for step in plan { awaiting[step.store] = Set(membership.liveReplicas(of: step.store)) }
        return (plan, awaiting)
    }
}
