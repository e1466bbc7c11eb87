import Flux
@testable import FluxBus
import FluxBusProtocol

/// Workers busy inside a handler: the engine handles nothing (its inputs wait, in order, as its sockets hold them),
/// while its ``LivenessGuard`` heartbeats for it with the epoch and sequence it had when it went busy. A stop during
/// the busy period makes the guard say GOODBYE after the grace; the worker then exits without performing anything
/// the handler's input caused (as a crash), and restarts.
extension SimCluster {
    /// How long a stop waits for a running handler before the guard says GOODBYE (``Worker/abandonGrace``).
    static var stopGrace: Int64 { Worker.abandonGrace.microseconds }

    /// Makes a worker busy for `micros`; with `abandonAfter`, the guard gives up on it that
    /// long from now, as it does a grace after a SIGTERM.
    func makeBusy(_ index: Int, for micros: Int64, abandonAfter: Int64? = nil) {
        guard let engine = workers[index].engine else { return }
        let until = now + micros
        workers[index].stalledUntil = max(workers[index].stalledUntil, until)
        workers[index].busyUntil = until
        busyPeriods += 1
        checker.note("fault: w\(index + 1) busy in a handler until \(until)")
        let incarnation = workers[index].incarnation
        // The guard beats once the worker has missed its tick by half an interval, then every interval.
        schedule(.guardBeat(index, incarnation: incarnation), after: engine.heartbeatInterval.microseconds * 3 / 2)
        if let abandonAfter, abandonAfter < micros {
            schedule(.abandon(index, incarnation: incarnation), after: abandonAfter)
        }
    }

    func beatForBusyWorker(_ index: Int, incarnation: Int) {
        guard let engine = workers[index].engine, incarnation == workers[index].incarnation, workers[index].busyUntil > now
        else { return }
        // Never while joining: a worker heartbeats only once welcomed.
        if engine.phase == .live || engine.phase == .catchingUp {
            checker.note("w\(index + 1)'s guard beats at #\(engine.lastApplied)")
            perform([.send(.heartbeat(.init(epoch: engine.epoch, sequence: engine.lastApplied)))], worker: index)
        }
        schedule(.guardBeat(index, incarnation: incarnation), after: engine.heartbeatInterval.microseconds)
    }

    func abandonBusyWorker(_ index: Int, incarnation: Int) {
        guard let engine = workers[index].engine, incarnation == workers[index].incarnation, workers[index].busyUntil > now
        else { return }
        busyStops += 1
        checker.note("fault: w\(index + 1) stopped while busy; its guard says GOODBYE and it exits")
        if engine.session.hasSaidHello, !workers[index].partitioned {
            let goodbye = codec.encode(.goodbye(.init(reason: "shutting down; a handler was still running")))
            deliver(.toCoordinator(goodbye.prepended(workers[index].routingID), link: .leaving), link: 3 * index + 2)
        }
        crashWorker(index)
        agenda.schedule(.workerRestart(index), at: now + Int64.random(in: 100_000...2_000_000, using: &busyRandom))
    }

    /// Every 100 ms of simulated time, by the plan's rate: a worker goes busy for 0.1–8 s, and some busy periods
    /// longer than the grace see a stop.
    func injectBusyHandler() {
        guard faults.busyRate > 0, Double.random(in: 0..<1, using: &busyRandom) < faults.busyRate / 10 else { return }
        let index = Int.random(in: 0..<workers.count, using: &busyRandom)
        guard workers[index].engine != nil, workers[index].stalledUntil <= now else { return }
        let micros = Int64.random(in: 100_000...8_000_000, using: &busyRandom)
        let grace = Self.stopGrace
        var abandonAfter: Int64?
        if micros > grace + 100_000, Double.random(in: 0..<1, using: &busyRandom) < faults.stopWhileBusy {
            abandonAfter = Int64.random(in: grace...(micros - 100_000), using: &busyRandom)
        }
        makeBusy(index, for: micros, abandonAfter: abandonAfter)
    }
}
