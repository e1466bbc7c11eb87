import FluxBusProtocol

/// Which faults one seed injects, and how often: swarm testing, as FoundationDB's simulator and TigerBeetle's VOPR
/// do it. Each fault is on or off per seed, so some seeds hammer one fault alone and others mix them, which finds
/// bugs that a fixed mix of every fault at once hides.
struct FaultPlan: CustomStringConvertible {
    /// Chance that one published message is lost to one subscriber (PUB/SUB drops silently: high-water mark, slow
    /// joiners, reconnects).
    var publishLoss = 0.0
    /// Network latency, in microseconds, per message; every connection stays FIFO.
    var latency: ClosedRange<Int64> = 50...400
    /// Per second of simulated time: chance of a partition between one worker and the coordinator.
    var partitionRate = 0.0
    /// Per second: chance that a worker crashes (restarting 0.1–2 s later).
    var workerCrashRate = 0.0
    /// Chance that a restarted worker comes back with its checkpoint rather than empty.
    var keepsCheckpoint = 0.5
    /// Per second: chance that the coordinator crashes (restarting 0.1–1.5 s later, from its log).
    var coordinatorCrashRate = 0.0
    /// Per second: chance that a worker stalls (a slow handler, a GC-like pause) for 0.05–1.5 s.
    var stallRate = 0.0
    /// Chance that one log flush, or one sync of a commit, fails; the coordinator then stops, as the real one exits 5.
    var flushFailure = 0.0
    /// Per second: chance that the coordinator stalls (SIGSTOP, a VM pause, a stalled disk) for 0.2–3 s.
    var coordinatorStallRate = 0.0
    /// Chance that a coordinator crash also damages its log: the tail cut off, or the whole log emptied, while the
    /// mark beside it survives (as the page cache does). The restarted coordinator must refuse it; then an operator
    /// restores it and the coordinator starts. Drawn from a generator of its own (``SimCluster``), so that it leaves
    /// every other fault of a seed as it was.
    var logDamage = 0.0
    /// Chance, at each log sync the coordinator owes once a commit's ACTIONs went out, that its process dies (or its
    /// machine loses power, the disk having written the commit) while the sync hangs. Drawn from a generator of its
    /// own, like ``logDamage``.
    var crashDuringSync = 0.0
    /// Whether one fault in three during a sync is a power cut that loses the commit, which stops the coordinator for
    /// an operator when a worker applied what it lost (the scenario's operator then recovers as OPERATIONS.md says).
    /// Off in the swarm, whose seeds have no operator: `SyncScenarioTests` runs it under swarm faults.
    var powerCutsLoseCommits = false
    /// Chance that a read of the log (a request id, completed entries, an entry's chain) fails, as a damaged row or an
    /// I/O error makes it fail. Drawn from a generator of its own, like ``logDamage``. Off in the swarm:
    /// `LogReadScenarioTests` runs it under swarm faults.
    var readFailure = 0.0
    /// Per second: chance that a worker is busy inside a handler for 0.1–8 s (past the 5 s ack deadline, or not):
    /// it handles nothing meanwhile, but its guard heartbeats for it. Drawn from a generator of its own, like
    /// ``logDamage``.
    var busyRate = 0.0
    /// Whether what a worker sends while its connection to the coordinator is down waits in its DEALER and goes when
    /// the connection comes up, as libzmq's does (``SimCluster/sendThroughDealer(_:worker:)``), rather than being lost.
    /// Drawn from a generator of its own, like ``logDamage``: on in half the swarm's runs.
    var dealerQueues = false
    /// Chance that a busy period longer than the stop grace sees a SIGTERM: after the grace the guard says GOODBYE
    /// for the worker, which exits without performing what the handler's input caused, and restarts.
    var stopWhileBusy = 0.0

    /// No fault at all. (Not `none`: as an argument of type `FaultPlan?` that would mean nil, a random plan.)
    static let nothing = FaultPlan()

    /// A random mix: each fault on with probability one half, at a random intensity.
    static func swarm(using random: inout SplitMix64) -> FaultPlan {
        func maybe(_ range: ClosedRange<Double>) -> Double {
            Bool.random(using: &random) ? Double.random(in: range, using: &random) : 0
        }
        var plan = FaultPlan()
        plan.publishLoss = maybe(0.01...0.3)
        plan.latency = 20...Int64.random(in: 100...20_000, using: &random)
        plan.partitionRate = maybe(0.05...0.5)
        plan.workerCrashRate = maybe(0.05...0.4)
        plan.keepsCheckpoint = Double.random(in: 0...1, using: &random)
        plan.coordinatorCrashRate = maybe(0.02...0.2)
        plan.stallRate = maybe(0.05...0.5)
        plan.flushFailure = maybe(0.001...0.02)
        plan.coordinatorStallRate = maybe(0.02...0.2)
        return plan
    }

    var description: String {
        func percent(_ value: Double) -> String { "\((value * 1000).rounded() / 10)%" }
        return "publishLoss \(percent(publishLoss)), latency \(latency.lowerBound)…\(latency.upperBound) µs, "
            + "partitions \(partitionRate)/s, worker crashes \(workerCrashRate)/s (checkpoint kept \(percent(keepsCheckpoint))), "
            + "coordinator crashes \(coordinatorCrashRate)/s, stalls \(stallRate)/s, flush failures \(percent(flushFailure)), "
            + "coordinator stalls \(coordinatorStallRate)/s, log damage \(percent(logDamage)) of coordinator crashes, "
            + "crashes during a log sync \(percent(crashDuringSync))\(powerCutsLoseCommits ? " (a third losing the commit)" : ""), "
            + "busy handlers \(busyRate)/s (stopped while busy \(percent(stopWhileBusy))), reads failing \(percent(readFailure)), "
            + "sends \(dealerQueues ? "queued" : "lost") in a worker's DEALER while its connection is down"
    }
}
