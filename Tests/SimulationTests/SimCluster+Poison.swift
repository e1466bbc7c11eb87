import Flux
@testable import FluxBus
import FluxBusProtocol

/// Handlers that trap: the ledger "crashes its process" on the ids of ``SimCluster/ledgerTraps``, on every replica and
/// every time, as a poison action does. The worker's crash marker notes the store and sequence when the handler is
/// armed; the engine call then counts as the process dying: its effects are dropped, the worker is down, and the
/// restarted one reports the crash in its HELLO, as the shell's marker file makes a real one do.
final class SimCrashMarker: HandlerCrashMarking {
    private let names: [String]
    private let traps: (String, UInt64) -> Bool
    /// The crash this process died of, once a trapping handler was armed.
    private(set) var crashed: HandlerCrash?

    init(names: [String], traps: @escaping (String, UInt64) -> Bool) {
        self.names = names
        self.traps = traps
    }

    func arm(store index: Int, sequence: UInt64) {
        guard crashed == nil, traps(names[index], sequence) else { return }
        crashed = HandlerCrash(sequence: sequence, store: names[index], signal: "SIGILL")
    }

    func disarm() {}
}

extension SimCluster {
    /// Gives a starting worker's engine a crash marker and the report of its previous process's crash.
    func armCrashMarker(_ engine: WorkerEngine, worker index: Int) {
        engine.previousCrash = workers[index].lastCrash
        workers[index].lastCrash = nil
        let marker = SimCrashMarker(names: engine.stores.map(\.name)) { [unowned self] store, sequence in
            !ledgerTraps.isEmpty && trapsOnlyOn.map { $0.contains(index) } != false && store == SimLedger.name
                && checker.order[sequence].map(ledgerTraps.contains) == true
        }
        engine.crashMarker = marker
        workers[index].crashMarker = marker
    }

    /// Whether the worker's last engine call ran a trapping handler: then the process died in it, its effects are
    /// lost, and it restarts after a while (as systemd's `Restart=on-failure` would).
    func diedInHandler(_ index: Int) -> Bool {
        guard let crash = workers[index].crashMarker?.crashed else { return false }
        checker.note("fault: w\(index + 1)'s \(crash.store) handler traps at #\(crash.sequence); the process dies")
        handlerTraps += 1
        crashWorker(index)
        workers[index].crashMarker = nil
        workers[index].lastCrash = crash
        agenda.schedule(.workerRestart(index), at: now + Int64.random(in: 100_000...1_000_000, using: &busyRandom))
        return true
    }
}
