import Flux
@testable import FluxBus
import FluxBusProtocol
import Testing

/// Issue 18, point 2, on the simulator: one process holds a worker id. The real coordinator engine refuses another
/// instance under a registration that is live (REJECT 10, `worker id busy`), and a worker restarted at once after a
/// crash gets its id back when the dead instance's registration lapses; the invariants hold throughout.
@Suite("Simulated worker id claims")
struct WorkerIDScenarioTests {
    @Test func aWorkerRestartedAtOnceAfterACrashWaitsForItsOldRegistrationThenGetsItsIDBack() {
        let cluster = SimCluster(seed: 6, faults: .nothing, actionsPerClient: 10)
        var busy = 0
        var welcomed = 0
        cluster.watchesDirectSends = { message, worker in
            guard worker == 0 else { return }
            if case .reject(let reject) = message, reject.code == .workerIDBusy { busy += 1 }
            if case .welcome = message { welcomed += 1 }
        }
        cluster.run(until: 60_000_000) { $0.checker.acknowledged.count >= 5 }
        let welcomesBefore = welcomed
        cluster.crashWorker(0)
        cluster.startWorker(0, withCheckpoint: false)
        #expect(ScenarioTests.settle(cluster), "\(cluster.checker.recentSteps.suffix(10))")
        #expect(cluster.checker.violation == nil, "\(cluster.checker.violation ?? "")")
        #expect(busy >= 1, "the restarted instance was told the id is busy while the dead one's registration stood")
        #expect(welcomed > welcomesBefore, "then it was welcomed under its id")
        #expect(cluster.coordinator?.membership.workers["w1"]?.instance == cluster.workers[0].engine?.instance)
        #expect(cluster.workers[0].engine?.phase == .live)
        #expect(ScenarioTests.ledger(cluster, 0) == ScenarioTests.ledger(cluster, 1))
    }
}
