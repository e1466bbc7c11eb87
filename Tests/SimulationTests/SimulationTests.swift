import Foundation
@testable import FluxBus
import Testing

/// Deterministic simulation: the real coordinator and worker engines under a seeded network, clock and disk with
/// faults, every invariant checked after every step (see ``SimChecker``).
@Suite("Simulation")
struct SimulationTests {
    /// The seeds `make test` runs: enough for at least 1,000,000 steps. `make simulate SEEDS=N` runs more, and
    /// `FLUXBUS_SIM_SEED=S` replays one.
    static var seeds: [UInt64] {
        let environment = ProcessInfo.processInfo.environment
        if let one = environment["FLUXBUS_SIM_SEED"].flatMap(UInt64.init) { return [one] }
        let count = environment["FLUXBUS_SIM_SEEDS"].flatMap(Int.init) ?? 175
        let first = environment["FLUXBUS_SIM_FIRST_SEED"].flatMap(UInt64.init) ?? 1
        return Array(first..<first + UInt64(count))
    }

    /// Seeds of the fixed set on which the simulator found replicas of a dependent diverging, the bug that
    /// ``colocatedDependentDiverges()`` shows alone: a dependency settled as lost in one view of a dispatch and ok in
    /// another. Traced on seed 186 (beyond the fixed set): under epoch 1 a RELEASE told w4 "ledger lost: no live
    /// replica" (its replicas were still joining) and w4 skipped audit; a failed log flush restarted the coordinator,
    /// which dispatched the same sequence again, settled the ledger ok, and w3 ran audit; w4 re-acknowledged its skip
    /// from memory. A settlement is released before it is durable, and "lost" is a guess. They run, and must fail
    /// exactly so, until the outcomes issue fixes it; any other failure fails the test. Which seeds show it moves
    /// whenever the engines send other messages (each message draws its latency from the seed): answering every
    /// waiter on a storage failure, and each connection once per request id, moved it from 42 and 133 to 55, 133
    /// and 173, still about 2% of seeds.
    static let knownDivergentSeeds: Set<UInt64> = [55, 133, 173]

    @Test("every invariant holds under swarm faults, seed after seed")
    func invariantsHold() {
        let started = ContinuousClock.now
        var steps = 0
        var failures: [String] = []
        var known: [String] = []
        for seed in Self.seeds {
            let run = SimulationRun(seed: seed)
            steps += run.steps
            guard let violation = run.violation else { continue }
            if Self.knownDivergentSeeds.contains(seed), violation.hasPrefix("replicas of audit diverged") {
                known.append(run.report)
            } else {
                failures.append(run.report)
            }
        }
        let elapsed = (ContinuousClock.now - started).components
        let seconds = max(Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18, 0.001)
        print("simulation: \(Self.seeds.count) seeds, \(steps) steps, \(Int(Double(steps) / seconds)) steps/s, \(failures.count) failed, \(known.count) known")
        #expect(failures.isEmpty, "\(failures.count) seeds failed:\n\(failures.joined(separator: "\n\n"))")
        let expectedKnown = Self.knownDivergentSeeds.intersection(Self.seeds).count
        if expectedKnown > 0 {
            withKnownIssue("replicas of a dependent diverge when its dependency is settled as lost", isIntermittent: false) {
                let summaries = known.map { $0.split(separator: "\n").prefix(2).joined(separator: "; ") }
                #expect(summaries.count == 0, "\(summaries.joined(separator: "\n"))")
            }
        }
        if ProcessInfo.processInfo.environment["FLUXBUS_SIM_SEED"] == nil, ProcessInfo.processInfo.environment["FLUXBUS_SIM_SEEDS"] == nil {
            #expect(known.count == expectedKnown, "the known divergent seeds diverge, and no others are counted so")
            #expect(steps >= 1_000_000, "the fixed set must run at least 1,000,000 simulated steps, ran \(steps)")
        }
    }

    @Test("the same seed replays the same run exactly")
    func replaysExactly() {
        for seed: UInt64 in [3, 17] {
            let first = SimulationRun(seed: seed)
            let second = SimulationRun(seed: seed)
            #expect(first.steps > 1_000)
            #expect(first.fingerprint == second.fingerprint, "seed \(seed) ran differently twice")
        }
    }

    /// A broken engine, built only in debug: the checker must find each bug within a few hundred seeds.
    @Test("the checker finds every planted bug", arguments: PlantedBug.allCases)
    func findsPlantedBug(_ bug: PlantedBug) {
        var found: SimulationRun?
        for seed in UInt64(1)...300 {
            let run = SimulationRun(seed: seed, mutation: bug)
            if run.violation != nil {
                found = run
                break
            }
        }
        #expect(found != nil, "\(bug) survived 300 seeds")
        if let found { print("planted \(bug): found by seed \(found.seed) after \(found.steps) steps: \(found.violation!)") }
    }

    /// Found by this simulator, and not fixed yet: a dependent beside its dependency resolves it locally, while a
    /// remote replica of the same dependent takes the coordinator's settlement. When the coordinator settles the
    /// dependency as lost (its replicas were catching up, or written off) though a replica did run it, the two
    /// dependents disagree: one ran, the other was skipped. Issue 14 ("an outcome must say what is known") owns the
    /// fix; until then this records the divergence as a known issue, and fails if it stops reproducing.
    @Test("a dependent beside its dependency diverges from a remote one when the coordinator settles it as lost")
    func colocatedDependentDiverges() {
        withKnownIssue("replicas of a dependent diverge when its dependency is settled as lost") {
            let run = SimulationRun(seed: 2, topology: .colocatedDependent)
            #expect(run.violation == nil, "\(run.violation ?? "")")
            #expect(run.violation?.contains("replicas of audit diverged") != false)
        }
    }
}

