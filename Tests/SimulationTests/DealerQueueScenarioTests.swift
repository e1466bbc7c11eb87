import Flux
@testable import FluxBus
import FluxBusProtocol
import Testing

/// A worker's DEALER queues what it sends while its connection is down, and the worker's ``HelloGate`` keeps one HELLO
/// in that queue (docs/PROTOCOL.md, "Repeated HELLOs"). Found outside the simulator: a full `make test` once saw a
/// worker welcomed three times (JoinOnceTests), because HELLOs re-sent through an outage all arrived when the
/// coordinator came up, and because a retry followed the held HELLO before its WELCOME came back. Here each rule of the
/// gate is shown to matter: without it, the same run welcomes the worker more than once. The swarm runs the queue
/// under every other fault (``FaultPlan/dealerQueues``).
@Suite("Simulated DEALER queues")
struct DealerQueueScenarioTests {
    @Test func aWorkerJoiningThroughAnOutageIsWelcomedOnce() {
        let gated = Self.joinThroughAnOutage(.gated)
        #expect(gated.welcomes == 1, "\(gated.cluster.checker.recentSteps.suffix(20))")
        #expect(gated.hellos == 1, "one HELLO waited in the DEALER through the 4 s outage")

        // The control: every HELLO the engine re-sent through the outage waited in the socket, and each brings a WELCOME.
        let ungated = Self.joinThroughAnOutage(.ungated)
        #expect(ungated.hellos >= 4)
        #expect(ungated.welcomes >= 4)
    }

    @Test func theHeldHelloCountsAsSentWhenItLeaves() {
        let gated = Self.joinThroughAnOutage(.gated, restartAt: 2_700_000, stallAfterRestart: 1_000_000)
        #expect(gated.welcomes == 1, "\(gated.cluster.checker.recentSteps.suffix(20))")
        #expect(gated.hellos == 1)

        // The control: the engine's retry, due a second after it made the held HELLO, follows it while the stalled
        // coordinator has not answered yet, and the coordinator welcomes the worker twice.
        let forgetting = Self.joinThroughAnOutage(.forgettingTheHeldHello, restartAt: 2_700_000, stallAfterRestart: 1_000_000)
        #expect(forgetting.hellos == 2)
        #expect(forgetting.welcomes == 2)
    }

    /// Crashes the coordinator, restarts worker w1 empty while it is down (so that it joins, saying HELLO every second
    /// into its DEALER), and starts the coordinator `restartAt` µs after the worker, stalled for `stallAfterRestart`
    /// µs if given. Counts the HELLOs from the new w1 that reach the coordinator and the WELCOMEs it sends w1, until
    /// everything settles; the invariants must hold throughout.
    static func joinThroughAnOutage(
        _ rule: SimCluster.HelloRule, restartAt: Int64 = 4_000_000, stallAfterRestart: Int64? = nil
    ) -> (hellos: Int, welcomes: Int, cluster: SimCluster) {
        var plan = FaultPlan.nothing
        plan.dealerQueues = true
        let cluster = SimCluster(seed: 11, faults: plan, actionsPerClient: 10)
        cluster.run(until: 60_000_000) { $0.checker.acknowledged.count >= 5 }
        var welcomes = 0
        var hellos = 0
        cluster.watchesDirectSends = { message, worker in
            if worker == 0, case .welcome = message { welcomes += 1 }
        }
        cluster.crashesCoordinatorOn = { cluster, messages in
            hellos += messages.filter { if case .hello(let hello) = $0 { hello.workerID == "w1" } else { false } }.count
            return false
        }
        cluster.helloRule = rule
        cluster.dealerReconnect = 100_000...200_000
        cluster.crashCoordinator(restartAfter: 600_000_000)
        cluster.crashWorker(0)
        cluster.startWorker(0, withCheckpoint: false)
        cluster.run(until: cluster.now + restartAt)
        #expect(cluster.coordinator == nil && cluster.workers[0].engine?.phase == .joining)
        cluster.startCoordinator()
        if let stallAfterRestart { cluster.stallCoordinator(for: stallAfterRestart) }
        // Through the stall and the joins, before settling ends every fault (the stall among them).
        cluster.run(until: cluster.now + (stallAfterRestart ?? 0) + 2_000_000)
        #expect(ScenarioTests.settle(cluster), "\(cluster.checker.recentSteps.suffix(10))")
        #expect(cluster.checker.violation == nil, "\(cluster.checker.violation ?? "")")
        #expect(cluster.workers[0].engine?.phase == .live)
        #expect(ScenarioTests.ledger(cluster, 0) == ScenarioTests.ledger(cluster, 1))
        return (hellos, welcomes, cluster)
    }
}
