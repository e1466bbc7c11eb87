import Flux
import Foundation
import FluxBus
import FluxBusProtocol
import FluxStores

/// The seeds' flight example across processes: a coordinator and three workers, one per store, started from the
/// `fluxbus` executable itself and talking over `ipc://` endpoints in a temporary directory.
public enum DistributedDemo {
    /// The three workers: one store each, so that both waits cross processes.
    static let workers = [("country-worker", "country=country"), ("city-worker", "city=city"), ("price-worker", "price=price")]

    /// Runs the demo and writes its report line by line.
    /// - Parameter executable: the `fluxbus` binary to start the processes from.
    /// - Returns: whether everything went as the demo expects: every process stopped cleanly.
    /// - Throws: ``BusError`` when the cluster does not come up; the message carries the processes' logs.
    public static func run(executable: URL, write: (String) -> Void) async throws -> Bool {
        let processes = try LocalProcesses(prefix: "fluxbus-demo")
        defer { processes.removeDirectory() }
        let control = processes.endpoint("control")
        try processes.launch(
            "coordinator", executable: executable,
            arguments: ["coordinator", "--control", control, "--publish", processes.endpoint("publish"), "--log-level", "warning"])
        for (id, store) in workers {
            try processes.launch(
                id, executable: executable,
                arguments: ["worker", "--id", id, "--store", store, "--coordinator", control, "--log-level", "warning"])
        }

        let client = try await BusClient(endpoint: control, timeout: .seconds(10))
        do {
            try await waitForWorkers(client: client, processes: processes)
            write("FluxBus flight demo: a coordinator and three worker processes on this machine")
            for (name, pid) in processes.pids { write("  \(name.padding(toLength: 15, withPad: " ", startingAt: 0)) pid \(pid)") }
            write("")
            for action in FlightDemo.script {
                let result = try await client.dispatch(action.name, payload: try action.encodedPayload())
                write("#\(result.sequence) \(action.name) \(String(decoding: try action.encodedPayload(), as: UTF8.self))"
                    + "  (\(ResultView.duration(micros: result.elapsedMicros)))")
                for outcome in result.outcomes {
                    write("    \(outcome.store.padding(toLength: 8, withPad: " ", startingAt: 0)) "
                        + "\(outcome.status.description.padding(toLength: 8, withPad: " ", startingAt: 0)) on \(outcome.worker)"
                        + (outcome.message.isEmpty ? "" : ": \(outcome.message)"))
                }
                for store in Flight.stores.map({ $0.name }) {
                    let state = try await client.state(of: store)
                    write("    \(store.padding(toLength: 8, withPad: " ", startingAt: 0)) \(String(decoding: state.state, as: UTF8.self))")
                }
                write("")
            }
            write("graph:")
            for line in GraphView.text(try await client.graph()).split(separator: "\n") { write("    \(line)") }
            write("")
        } catch {
            await client.close()
            await processes.stop()
            throw BusError(code: .unreachable, message: "the demo failed: \(error)\n\(processes.allLogs())")
        }
        await client.close()

        let workerStatuses = await processes.stop(workers.map(\.0))
        let coordinatorStatus = await processes.stop(["coordinator"])["coordinator"] ?? -1
        let clean = coordinatorStatus == 0 && workerStatuses.values.allSatisfy { $0 == 0 }
        write("stopped with SIGTERM: coordinator exit \(coordinatorStatus), workers exit "
            + workers.map { "\(workerStatuses[$0.0].map(String.init) ?? "?")" }.joined(separator: ", "))
        if !clean { write(processes.allLogs()) }
        return clean
    }

    private static func waitForWorkers(client: BusClient, processes: LocalProcesses) async throws {
        let deadline = ContinuousClock.now.advanced(by: .seconds(20))
        while ContinuousClock.now < deadline {
            if let status = try? await client.status(timeout: .seconds(1)),
                status.workers.filter({ $0.state == .live }).count == workers.count
            {
                return
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw BusError(code: .unreachable, message: "the workers did not all become live within 20 seconds")
    }
}
