import Flux
@testable import FluxBus
import FluxBusProtocol
import Logging

/// Handling one event of the agenda: delivering a message over a link that may be down or partitioned, a tick, a
/// crash or a restart, unless a stall postpones it.
extension SimCluster {
    func handle(_ event: Event) {
        switch event {
        case .toCoordinator(let frames, let link):
            guard let coordinator, linkIsUp(link) else { return }
            if postponedByCoordinatorStall(event) { return }
            if let trigger = crashesCoordinatorOn, trigger(self, (try? codec.decodeAll(Array(frames.dropFirst()))) ?? []) {
                crashesCoordinatorOn = nil
                return crashCoordinator()
            }
            checker.coordinatorReceived(frames)
            coordinator.handle(.message(frames, userID: nil), at: time)
            coordinator.handle(.burstEnd, at: time)
            perform(coordinator.takeEffects())
        case .toWorker(let index, let frames, let fromSubscriber, let generation):
            guard let engine = workers[index].engine, generation == workers[index].generation else { return }
            if postponedByStall(event, worker: index) { return }
            if !fromSubscriber, faults.dealerQueues { workers[index].hellos.heardFromCoordinator() }
            engine.handle(.message(frames, fromSubscriber: fromSubscriber), at: time)
            perform(engine.takeEffects(), worker: index)
        case .toClient(let index, let frames, _):
            var client = clients[index]
            for message in (try? codec.decodeAll(frames)) ?? [] { client.receive(message, at: now, cluster: self) }
            clients[index] = client
        case .coordinatorTick(let incarnation):
            guard let coordinator, incarnation == coordinatorIncarnation else { return }
            if postponedByCoordinatorStall(event) { return }
            coordinator.handle(.tick, at: time)
            perform(coordinator.takeEffects())
            agenda.schedule(.coordinatorTick(incarnation: incarnation), at: now + configuration.tickInterval.microseconds)
        case .completedWindow(let incarnation):
            guard let coordinator, incarnation == coordinatorIncarnation else { return }
            if postponedByCoordinatorStall(event) { return }
            completedWindowSet = false
            coordinator.handle(.completedWindowEnded, at: time)
            perform(coordinator.takeEffects())
        case .coordinatorRestart:
            if coordinator == nil { startCoordinator() }
        case .duringSync(let fault, let incarnation):
            guard coordinator != nil, incarnation == coordinatorIncarnation else { return }
            strike(fault)
        case .workerTick(let index, let incarnation):
            guard let engine = workers[index].engine, incarnation == workers[index].incarnation else { return }
            if postponedByStall(event, worker: index) { return }
            engine.handle(.tick, at: time)
            perform(engine.takeEffects(), worker: index)
            let interval = engine.phase == .joining ? 10_000 : engine.heartbeatInterval.microseconds
            if engine.phase != .stopped { agenda.schedule(event, at: now + interval) }
        case .workerCheckpoint(let index, let incarnation):
            guard let engine = workers[index].engine, incarnation == workers[index].incarnation else { return }
            engine.handle(.checkpointDue, at: time)
            perform(engine.takeEffects(), worker: index)
            agenda.schedule(event, at: now + 1_000_000)
        case .workerEncoded(let index, let incarnation, let requestID, let result):
            guard let engine = workers[index].engine, incarnation == workers[index].incarnation else { return }
            if postponedByStall(event, worker: index) { return }
            engine.handle(.stateEncoded(requestID: requestID, result), at: time)
            perform(engine.takeEffects(), worker: index)
        case .workerRestart(let index):
            if workers[index].engine == nil, !retired.contains(index) {
                startWorker(index, withCheckpoint: Double.random(in: 0..<1, using: &random) < faults.keepsCheckpoint)
            }
        case .subscriptionUp(let index, let incarnation):
            if incarnation == workers[index].incarnation, workers[index].subscribed { workers[index].subscriptionReady = true }
        case .healPartition(let index):
            workers[index].partitioned = false
            if coordinator != nil { scheduleDealerReconnect(index) }
        case .dealerConnected(let index, let incarnation, let coordinatorIncarnation):
            dealerConnected(index, incarnation: incarnation, coordinator: coordinatorIncarnation)
        case .toReader(let frames, let generation):
            guard generation == reader.generation else { return }
            var reader = self.reader
            for message in (try? codec.decodeAll(frames)) ?? [] { reader.receive(message, at: now, cluster: self) }
            self.reader = reader
        case .readerWake:
            var reader = self.reader
            if faultsOn || !isQuiet { reader.wake(at: now, cluster: self) }
            self.reader = reader
            if faultsOn { agenda.schedule(.readerWake, at: now + 700_000) }
        case .clientWake(let index):
            var client = clients[index]
            client.wake(at: now, cluster: self)
            clients[index] = client
        case .chaos:
            if faultsOn { injectFaults() }
            agenda.schedule(.chaos, at: now + 100_000)
        case .guardBeat(let index, let incarnation):
            beatForBusyWorker(index, incarnation: incarnation)
        case .abandon(let index, let incarnation):
            abandonBusyWorker(index, incarnation: incarnation)
        }
    }

    var time: MonotonicTime { MonotonicTime(nanoseconds: now * 1_000) }

    /// A stalled coordinator handles nothing until the stall ends: its input waits, in order.
    private func postponedByCoordinatorStall(_ event: Event) -> Bool {
        guard coordinatorStalledUntil > now else { return false }
        agenda.schedule(event, at: coordinatorStalledUntil)
        return true
    }

    /// A stalled worker handles nothing until the stall ends: its input waits, in order.
    private func postponedByStall(_ event: Event, worker index: Int) -> Bool {
        guard workers[index].stalledUntil > now else { return false }
        agenda.schedule(event, at: workers[index].stalledUntil)
        return true
    }

    private func linkIsUp(_ link: Link) -> Bool {
        switch link {
        case .worker(let index, let generation):
            workers[index].engine != nil && generation == workers[index].generation && !workers[index].partitioned
        case .client(let index, let generation): generation == clients[index].generation
        case .leaving: true
        case .reader(let generation): generation == reader.generation
        }
    }
}
