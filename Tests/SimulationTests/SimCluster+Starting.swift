import Flux
@testable import FluxBus
import FluxBusProtocol
import Logging

/// Starting the coordinator (from its simulated disk, refusing a damaged log) and the workers (from their checkpoints).
extension SimCluster {
    func startCoordinator() {
        let log = SimulatedLog(disk: disk, flushFails: { [unowned self] in
            faults.flushFailure > 0 && Double.random(in: 0..<1, using: &random) < faults.flushFailure
        }, readFails: { [unowned self] in
            faults.readFailure > 0 && Double.random(in: 0..<1, using: &readRandom) < faults.readFailure
        })
        log.onPlans = { [unowned self] in checker.plansRecorded($0, known: $1) }
        let recovered: LogRecovery
        do {
            recovered = try log.recover()
        } catch {
            // A damaged log must be refused; the operator then restores it from a backup and starts again.
            guard let backup = damagedLogBackup else { return checker.fail("the log could not be recovered: \(error)") }
            checker.note("the coordinator refused its damaged log: \(error); restoring it")
            logRefusals += 1
            disk.restore(backup)
            damagedLogBackup = nil
            return startCoordinator()
        }
        if damagedLogBackup != nil {
            return checker.fail("a damaged log started as a bus: the log ends at #\(recovered.lastSequence), "
                + "but #\(disk.highestCommitted) had been committed")
        }
        checker.coordinatorStarted(recovered: recovered, disk: disk)
        let engine = CoordinatorEngine(
            configuration: configuration, epoch: recovered.lastEpoch + 1, log: log, recovered: recovered,
            controlEndpoint: "sim://control", advertisedPublishEndpoint: "sim://publish", logger: logger, now: time)
        engine.plantedBug = mutation
        coordinator = engine
        completedWindowSet = false
        configuration.newBus = false
        checker.note("coordinator started, epoch \(engine.epoch), log through #\(recovered.lastSequence)")
        engine.flushLog()
        perform(engine.takeEffects())
        agenda.schedule(.coordinatorTick(incarnation: coordinatorIncarnation), at: now + 1_000)
        // Workers' DEALERs reconnect by themselves, and their SUB sockets to the new PUB, after a while.
        for index in workers.indices { scheduleDealerReconnect(index) }
        for index in workers.indices where workers[index].subscribed {
            workers[index].subscriptionReady = false
            agenda.schedule(
                .subscriptionUp(index, incarnation: workers[index].incarnation),
                at: now + Int64.random(in: 10_000...300_000, using: &random))
        }
    }

    func startWorker(_ index: Int, withCheckpoint: Bool) {
        var node = workers[index]
        node.incarnation += 1
        node.generation += 1
        node.subscribed = false
        node.subscriptionReady = false
        node.partitioned = false
        let engine = WorkerEngine(
            id: node.id, instance: random.next(), stores: node.stores.map { AnyStore($0) },
            heartbeat: configuration.heartbeatInterval, logger: logger, now: time)
        engine.plantedBug = mutation
        engine.keepsCheckpoint = true
        engine.transferChunkBytes = Self.chunkBytes
        engine.catchUp = CatchUp(window: Self.catchUpWindow)
        fetchesAhead += node.engine?.catchUp.fetchesAhead ?? 0
        if withCheckpoint, let checkpoint = node.checkpoint {
            do {
                try engine.resume(from: checkpoint, file: CheckpointFile(directory: "/simulated", worker: node.id))
            } catch {
                return checker.fail("\(node.id) cannot resume from its checkpoint: \(error)")
            }
        } else {
            node.checkpoint = nil
        }
        checker.workerStarted(index, from: withCheckpoint ? node.checkpoint?.lastApplied : nil)
        node.engine = engine
        workers[index] = node
        openDealer(index)
        armCrashMarker(engine, worker: index)
        engine.handle(.start, at: time)
        perform(engine.takeEffects(), worker: index)
        agenda.schedule(.workerTick(index, incarnation: node.incarnation), at: now + 10_000)
        agenda.schedule(.workerCheckpoint(index, incarnation: node.incarnation), at: now + 1_000_000)
    }
}

extension Array where Element == [UInt8] {
    func prepended(_ frame: [UInt8]) -> [[UInt8]] { [frame] + self }
}
