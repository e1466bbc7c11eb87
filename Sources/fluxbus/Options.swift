import ArgumentParser
import Foundation
import FluxBus
import Logging

/// Where the coordinator is, for every command that talks to it.
struct ConnectionOptions: ParsableArguments {
    @Option(name: .customLong("coordinator"), help: ArgumentHelp(
        "The coordinator's control endpoint.",
        discussion: "Defaults to $FLUXBUS_COORDINATOR, then \(BusDefaults.controlEndpoint).",
        valueName: "endpoint"))
    var endpoint: String?

    @Option(help: "Seconds to wait for an answer.")
    var timeout: Double = 10

    var resolvedEndpoint: String {
        endpoint ?? ProcessInfo.processInfo.environment[BusDefaults.coordinatorEnvironmentVariable] ?? BusDefaults.controlEndpoint
    }

    func validate() throws {
        guard timeout > 0 else { throw ValidationError("--timeout must be positive, got \(timeout)") }
    }

    func client() async throws -> BusClient {
        try await BusClient(endpoint: resolvedEndpoint, timeout: .milliseconds(Int64(timeout * 1000)))
    }
}

/// Logging for long-running commands.
struct LoggingOptions: ParsableArguments {
    @Option(help: "Least severe level to log: trace, debug, info, notice, warning, error, critical.")
    var logLevel: String = "info"

    func validate() throws {
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError("unknown --log-level '\(logLevel)'; use trace, debug, info, notice, warning, error or critical")
        }
    }

    func bootstrap(label: String) -> Logger {
        let level = Logger.Level(rawValue: logLevel) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        return Logger(label: label)
    }
}

/// Prints what failed and what to do, and returns the documented exit code for it.
func reportFailure(_ error: any Error) -> ExitCode {
    guard let error = error as? BusError else {
        printError("error: \(error)")
        return ExitCode(3)
    }
    printError("error: \(error.message)")
    switch error.code {
    case .usage: return ExitCode(2)
    case .refused: return ExitCode(4)
    default: return ExitCode(3)
    }
}

func printError(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}

/// Runs a client command, mapping bus errors to exit codes.
func withClient<T>(_ connection: ConnectionOptions, _ body: (BusClient) async throws -> T) async throws -> T {
    let client: BusClient
    do {
        client = try await connection.client()
    } catch {
        throw reportFailure(error)
    }
    do {
        let value = try await body(client)
        await client.close()
        return value
    } catch let code as ExitCode {
        await client.close()
        throw code
    } catch {
        await client.close()
        throw reportFailure(error)
    }
}
