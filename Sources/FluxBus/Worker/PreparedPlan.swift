import Flux
import FluxBusProtocol

/// What a worker derives from an ACTION's plan before running it: the stores that run here, the dependencies that
/// also run here (so have a released step, see ``LocalDispatch``), and the plan's execution with nothing settled.
///
/// The derivation depends only on the plan and on which of its stores run here, so a batch or a replay, which
/// repeats one plan thousands of times, derives it once (``PlanCache``) and shares it. Immutable, and a class so that
/// sharing it retains one object: as a struct, each action copied and destroyed its five arrays.
final class PreparedPlan {
    let plan: [PlanStep]
    /// The planned stores that run here, each once, in plan order.
    let local: [String]
    /// The dependencies of stores here that also run here.
    let releasedHere: [String]
    let execution: DependencyExecution
    /// The store here when it is the only one and waits for no store of the plan: it runs at once, reads no output,
    /// and is never skipped, so a replay runs it without a ``LocalDispatch`` (``WorkerEngine/replayAlone``).
    let aloneHere: String?

    /// The plan prepared for a worker where `hosted` says which stores run.
    init(_ plan: [PlanStep], hosted: (String) -> Bool) {
        var local: [String] = []
        // Loops rather than chains of map and filter: a plan that is not reused is derived per action.
        for step in plan where hosted(step.store) && !local.contains(step.store) { local.append(step.store) }
        var dependenciesHere: [String] = []
        for step in plan {
            for store in step.waitsFor where local.contains(store) && !dependenciesHere.contains(store) {
                dependenciesHere.append(store)
            }
        }
        let steps: [DependencyExecution.Step]
        if dependenciesHere.isEmpty {
            // The common plan: nothing here waits for a store that also runs here, so no step is renamed.
            steps = plan.map { DependencyExecution.Step(store: $0.store, waitsFor: $0.waitsFor) }
        } else {
            let releasedSteps = plan.filter { dependenciesHere.contains($0.store) }.map {
                DependencyExecution.Step(store: Self.released($0.store))
            }
            steps = releasedSteps + plan.map { step in
                DependencyExecution.Step(
                    store: step.store, waitsFor: step.waitsFor.map { dependenciesHere.contains($0) ? Self.released($0) : $0 })
            }
        }
        self.plan = plan
        self.local = local
        releasedHere = dependenciesHere
        execution = DependencyExecution(steps, runsHere: local.contains)
        aloneHere = local.count == 1 && plan.allSatisfy { step in
            step.store != local[0] || !step.waitsFor.contains { dependency in plan.contains { $0.store == dependency } }
        } ? local[0] : nil
    }

    /// The name of a dependency's released outcome; no store name contains ':' (BusName).
    static func released(_ store: String) -> String { "released:" + store }

    static func original(_ name: String) -> String {
        name.hasPrefix("released:") ? String(name.dropFirst("released:".count)) : name
    }
}

/// The last plan a worker prepared, reused while the next ACTION has the same plan and the same of its stores run here.
/// Which stores run here is asked afresh for every action (a snapshot or a poison mark changes it per sequence); only
/// the derivation from that answer is saved. Plans of more than 64 steps, beyond the mask, are derived every time.
struct PlanCache {
    /// The last preparation; `nil` before the first.
    private var last: PreparedPlan?
    /// Which plan positions ran here for it: bit `i` for the store at position `i`.
    private var lastMask: UInt64 = 0
    /// The last plan found equal to its plan: the array the latest REPLAY's entries share.
    private var lastPlan: [PlanStep] = []
    #if DEBUG
    /// Planted for the simulation tests (``PlantedBug/workerReusesAStalePlan``): reuse a plan whatever runs here.
    var ignoresWhatRunsHere = false
    #endif

    mutating func prepared(_ plan: [PlanStep], hosted: (String) -> Bool) -> PreparedPlan {
        guard plan.count <= 64 else { return PreparedPlan(plan, hosted: hosted) }
        var mask: UInt64 = 0
        for (position, step) in plan.enumerated() where hosted(step.store) { mask |= 1 << UInt64(position) }
        var sameStoresHere = lastMask == mask
        #if DEBUG
        sameStoresHere = sameStoresHere || ignoresWhatRunsHere
        #endif
        if sameStoresHere, let last, lastPlan == plan {
            // A REPLAY's entries share one plan array, but each REPLAY decodes its own: keeping the newest makes the
            // comparison of the next entries one of identity, not step by step.
            lastPlan = plan
            return last
        }
        let fresh = PreparedPlan(plan, hosted: hosted)
        (last, lastMask, lastPlan) = (fresh, mask, plan)
        return fresh
    }
}
