import Flux
@testable import FluxBus
import FluxBusProtocol

/// Plans name every store the bus knows that handles the action: a store whose workers are away (lost, or not back
/// since a coordinator restart) is planned and records `unknown`, and applies the action when a replica returns. A
/// plan that leaves such a store out makes its replicas skip the action for good, while the answer reads
/// `unhandled` (an outside probe found that after a restart whose grace period ended before the workers were back).
extension SimChecker {
    /// Each simulated store with the stores it waits for; all of them handle `sim.append`.
    private static let simulatedStores: [(name: String, dependsOn: [String])] = [
        (SimLedger.name, SimLedger.dependencies), (SimAudit.name, SimAudit.dependencies), (SimTally.name, SimTally.dependencies),
    ]

    /// Called as a request's plans are logged, with the stores the log knows then.
    func plansRecorded(_ plans: [String: [PlanStep]], known: [String]) {
        guard let plan = plans[Sim.append.name] else { return }
        let known = Set(known)
        for store in Self.simulatedStores where known.contains(store.name) && store.dependsOn.allSatisfy(known.contains) {
            guard plan.contains(where: { $0.store == store.name }) else {
                return fail("a plan left out store `\(store.name)`, which the bus knows and which handles `sim.append`: "
                    + "\(plan.map(\.store)); its replicas would skip the action for good")
            }
        }
    }
}
