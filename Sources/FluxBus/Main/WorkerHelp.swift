import Flux


/// What `--help` prints for a worker executable built on ``WorkerMain``.
enum WorkerHelp {
    static func text(program: String, stores: [any Store.Type]) -> String {
        let names = stores.map { HostedStore($0).effectiveName }
        let width = names.map(\.count).max() ?? 0
        var storeLines: [String] = []
        for (name, store) in zip(names, stores) {
            let dependencies = HostedStore(store).makeStore().dependencies
            let padded = name + String(repeating: " ", count: width - name.count)
            storeLines.append(dependencies.isEmpty ? "  " + name : "  " + padded + "  waits for " + dependencies.joined(separator: ", "))
        }
        let storeList = storeLines.joined(separator: "\n")
        let variable = BusDefaults.coordinatorEnvironmentVariable
        let endpoint = BusDefaults.controlEndpoint
        return """
            USAGE: \(program) --id ID [--coordinator ENDPOINT] [--store NAME ...] [options]

            Hosts this program's stores on a FluxBus worker, which joins the coordinator, catches up, and applies \
            every dispatch its stores handle.

            STORES (all by default; --store picks some):
            \(storeList)

            OPTIONS:
              --id ID                    The worker's id: stable across restarts, unique on the bus (required).
              --coordinator ENDPOINT     The coordinator's control endpoint (default: $\(variable),
                                         then \(endpoint)).
              --store NAME               Host only this store; repeat for several.
              --data-dir DIR             Keep a checkpoint in DIR and resume from it on restart.
              --checkpoint-ms MS         With --data-dir, how often to rewrite the checkpoint (default: 1000).
              --curve-server-key KEY     The coordinator's CURVE public key: 40 Z85 characters, or a .pub file.
              --curve-secret-key FILE    This worker's secret key file, from `fluxbus keygen`.
              --log-level LEVEL          trace, debug, info, notice, warning, error or critical (default: info).
              --log-format FORMAT        text or json (default: text).
              -h, --help                 Show this help.

            SIGTERM or SIGINT finishes the dispatch in hand, says goodbye to the coordinator, and exits 0.

            EXIT CODES:
              0  stopped by SIGTERM or SIGINT
              2  bad arguments, or a checkpoint it cannot use (move DIR/ID.checkpoint aside)
              3  any other failure
              4  the coordinator refused the worker (a cycle, a topology conflict, a version mismatch)
              5  a storage failure

            EXAMPLE:
              \(program) --id \(program)-1 --coordinator tcp://127.0.0.1:7401
            """
    }
}
