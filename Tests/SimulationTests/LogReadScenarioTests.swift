import Flux
import FluxBusProtocol
@testable import FluxBus
import Testing

/// Reads of the log fail now and then, as a damaged row or an I/O error makes them fail: a retry's request id, the
/// entries a FETCH or a restarted batch reads, an entry's chain. None may pass for "the log holds nothing there". A
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
}
