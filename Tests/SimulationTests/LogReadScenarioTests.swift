import Flux
import FluxBusProtocol
@testable import FluxBus
import Testing

/// Reads of the log fail now and then, as a damaged row or an I/O error makes them fail: a retry's request id, the
/// entries a FETCH or a restarted batch reads, an entry's chain, a snapshot's bytes. None may pass for "the log holds nothing there". A
/// retry whose id could not be read back was once taken for a new request and applied a second time
/// (`LogReadFailureTests`, on a real SQLite log); under swarm faults every invariant must hold.
@Suite("Simulation: reads of the log that fail")
struct LogReadScenarioTests {
    @Test func everyInvariantHoldsWhenReadsOfTheLogFail() {
        var (failedReads, failed) = (0, [String]())
        for seed in UInt64(1)...40 {
            var random = SplitMix64(seed: seed ^ 0x4EAD)
            var plan = FaultPlan.swarm(using: &random)
            plan.readFailure = 0.05
            let run = SimulationRun(seed: seed, faults: plan)
            if let violation = run.violation { failed.append("seed \(seed): \(violation)") }
            failedReads += run.failedReads
        }
        print("reads of the log that fail, under swarm faults: 40 seeds, \(failedReads) reads failed")
        #expect(failed.isEmpty, "\(failed.prefix(3))")
        #expect(failedReads >= 100, "the faults struck: \(failedReads)")
    }

    /// With power cuts that lose commits too, a read that fails can fall on a joining worker's history check. Welcomed
    /// unchecked, a worker whose applied entry the power cut lost served that state and acknowledged it: seed 1047
    /// did (w2's ledger at #50), until such a worker was refused for now (REJECT 11) and checked at its next HELLO.
    @Test func aJoiningWorkersHistoryIsCheckedEvenWhenReadsFail() {
        var (failedReads, lost, failed) = (0, 0, [String]())
        let seeds = Array(UInt64(1)...40) + [1047]
        for seed in seeds {
            var random = SplitMix64(seed: seed ^ 0xC0B1_1ED)
            var plan = FaultPlan.swarm(using: &random)
            plan.crashDuringSync = 0.05
            plan.powerCutsLoseCommits = true
            plan.readFailure = 0.03
            let run = SimulationRun(seed: seed, faults: plan)
            if let violation = run.violation { failed.append("seed \(seed): \(violation)") }
            failedReads += run.failedReads
            lost += run.lostCommits
        }
        print("reads that fail, with power cuts that lose commits: \(seeds.count) seeds, \(failedReads) reads failed, \(lost) commits lost")
        #expect(failed.isEmpty, "\(failed.prefix(3))")
        #expect(failedReads >= 100 && lost >= 10, "the faults struck: \(failedReads) reads, \(lost) commits")
    }
}
