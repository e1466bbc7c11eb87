import ArgumentParser
import Foundation
import FluxBus

@main
struct FluxBusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fluxbus",
        abstract: "Facebook's Flux dispatcher, faithful in process and distributed over ZeroMQ.",
        discussion: """
            A coordinator owns the order of actions and the waitFor graph; workers host stores and acknowledge \
            every action; clients dispatch and read. Start with `fluxbus demo`.

            Defaults for --coordinator, --timeout, --log-level and --log-format can live in a JSON config file: \
            $FLUXBUS_CONFIG, or $XDG_CONFIG_HOME/fluxbus/config.json, or ~/.config/fluxbus/config.json. For example \
            {"coordinator": "tcp://10.0.0.5:7401", "timeout": 5, "logFormat": "json"}. FLUXBUS_COORDINATOR beats the \
            file; a flag beats both.

            Exit codes:
              0  done
              1  the dispatch completed, but a store failed or was skipped, or no store handled it
              2  usage: a bad argument or configuration
              3  unreachable or timed out, or the coordinator stopped with the outcome unknown
              4  refused: busy, unauthorized, invalid graph, a request id reused for another request
              5  the coordinator's log cannot be read or written, or holds less than it had committed
              6  the dispatch completed, but a store's outcome is not known yet (its replicas did not answer in \
            time): it is in the log and will be applied; ask again with the same --request-id, never a new one
            """,
        subcommands: [
            CoordinatorCommand.self, WorkerCommand.self, DispatchCommand.self, StatusCommand.self, GraphCommand.self,
            StateCommand.self, WatchCommand.self, TailCommand.self, TopCommand.self, Demo.self, Bench.self, KeygenCommand.self, BenchPeer.self,
        ]
    )

    /// Runs the command, with one change to ArgumentParser's exit codes: usage errors exit 2, as documented, rather
    /// than 64.
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch {
            if exitCode(for: error) == .validationFailure {
                printError(fullMessage(for: error))
                Foundation.exit(2)
            }
            exit(withError: error)
        }
    }
}
