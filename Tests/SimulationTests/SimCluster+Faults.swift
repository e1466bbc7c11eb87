import Flux
@testable import FluxBus
import FluxBusProtocol

/// The faults a seed's plan injects, and the crashes scenarios script.
extension SimCluster {
    /// Every 100 ms of simulated time: each fault of the plan, by its rate.
    func injectFaults() {
        func happens(_ ratePerSecond: Double) -> Bool {
            ratePerSecond > 0 && Double.random(in: 0..<1, using: &random) < ratePerSecond / 10
        }
        let index = Int.random(in: 0..<workers.count, using: &random)
        if happens(faults.partitionRate), workers[index].engine != nil, !workers[index].partitioned {
            workers[index].partitioned = true
            workers[index].generation += 1
            dealerDisconnected(index)
            checker.note("fault: partition w\(index + 1)")
            agenda.schedule(.healPartition(index), at: now + Int64.random(in: 100_000...3_000_000, using: &random))
        }
        if happens(faults.workerCrashRate), workers[index].engine != nil {
            crashWorker(index)
            agenda.schedule(.workerRestart(index), at: now + Int64.random(in: 100_000...2_000_000, using: &random))
        }
        if happens(faults.stallRate), workers[index].engine != nil {
            workers[index].stalledUntil = now + Int64.random(in: 50_000...1_500_000, using: &random)
            checker.note("fault: stall w\(index + 1) until \(self.workers[index].stalledUntil)")
        }
        if happens(faults.coordinatorCrashRate), coordinator != nil {
            crashCoordinator()
        }
        if happens(faults.coordinatorStallRate), coordinator != nil, coordinatorStalledUntil <= now {
            stallCoordinator(for: Int64.random(in: 200_000...3_000_000, using: &random))
        }
        injectBusyHandler()
    }

    /// Clients that do not ask again about unknown outcomes, for scenarios that count each client's sends.
    func countsEverySend() {
        for index in clients.indices { clients[index].asksAgainForUnknown = false }
    }

    func crashWorker(_ index: Int) {
        checker.note("fault: crash w\(index + 1)")
        workers[index].engine = nil
        workers[index].generation += 1
        workers[index].dealerQueue = []
        workers[index].subscribed = false
        workers[index].subscriptionReady = false
        workers[index].stalledUntil = 0
        workers[index].busyUntil = 0
    }

    /// The coordinator handles nothing for `micros`: its input waits, in order, as a stopped process's sockets hold it.
    func stallCoordinator(for micros: Int64) {
        coordinatorStalledUntil = now + micros
        checker.note("fault: stall the coordinator until \(self.coordinatorStalledUntil)")
    }

    /// Crashes the coordinator; it restarts `restartAfter` microseconds later, or 0.1–1.5 s later when nil.
    func crashCoordinator(restartAfter: Int64? = nil) {
        checker.note("fault: crash the coordinator")
        coordinator = nil
        coordinatorStalledUntil = 0
        coordinatorIncarnation += 1
        for index in workers.indices {
            workers[index].generation += 1
            dealerDisconnected(index)
        }
        for index in clients.indices { clients[index].generation += 1 }
        reader.generation += 1
        agenda.schedule(.coordinatorRestart, at: now + (restartAfter ?? Int64.random(in: 100_000...1_500_000, using: &random)))
        if faults.logDamage > 0, let last = disk.newestSequence, Double.random(in: 0..<1, using: &damageRandom) < faults.logDamage {
            damagedLogBackup = disk.contents
            if Bool.random(using: &damageRandom) {
                let cut = UInt64.random(in: 1...min(last, 50), using: &damageRandom)
                disk.removeActions(after: last - cut)
                checker.note("fault: the log loses its last \(cut) actions (through #\(last))")
            } else {
                disk.restore(MemoryLogTables())
                checker.note("fault: the log is emptied (it held through #\(last))")
            }
        }
    }
}
