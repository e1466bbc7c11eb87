import ArgumentParser
import Foundation
import FluxBus
import Logging

/// Where the coordinator is, for every command that talks to it.
struct ConnectionOptions: ParsableArguments {
    @Option(name: .customLong("coordinator"), help: ArgumentHelp(
        "The coordinator's control endpoint.",
        discussion: "Defaults to $FLUXBUS_COORDINATOR, then the config file's \"coordinator\", then \(BusDefaults.controlEndpoint).",
        valueName: "endpoint"))
    var endpoint: String?

    @Option(name: .customLong("timeout"), help: "Seconds to wait for an answer (default: the config file's, or 10).")
    var timeoutOption: Double?

    var resolvedEndpoint: String {
        endpoint ?? ProcessInfo.processInfo.environment[BusDefaults.coordinatorEnvironmentVariable]
            ?? (try? CLIConfig.load())?.coordinator ?? BusDefaults.controlEndpoint
    }

    var timeout: Double { timeoutOption ?? (try? CLIConfig.load())?.timeout ?? 10 }

    @OptionGroup var curve: CurveOptions

    func validate() throws {
        do { _ = try CLIConfig.load() } catch { throw ValidationError("\(error)") }
        guard timeout > 0 else { throw ValidationError("--timeout must be positive, got \(timeout)") }
    }

    func client() async throws -> BusClient {
        try await BusClient(endpoint: resolvedEndpoint, timeout: .milliseconds(Int64(timeout * 1000)), security: curve.security())
    }
}

/// CURVE for a worker or client talking to a coordinator that requires it.
struct CurveOptions: ParsableArguments {
    @Option(help: ArgumentHelp(
        "The coordinator's public key: 40 Z85 characters, or a .pub file (default: the config file's curveServerKey).",
        valueName: "key-or-file"))
    var curveServerKey: String?

    @Option(help: ArgumentHelp(
        "This peer's secret key file, mode 0600, from `fluxbus keygen` (default: the config file's curveSecretKey).",
        valueName: "file"))
    var curveSecretKey: String?

    /// The settings, or nil for plain text.
    /// - Throws: ``BusError`` (`usage`) when only one of the two is given, or a key does not load.
    func security() throws -> PeerSecurity? {
        let config = try? CLIConfig.load()
        let server = curveServerKey ?? config?.curveServerKey
        let secret = curveSecretKey ?? config?.curveSecretKey
        switch (server, secret) {
        case (nil, nil):
            return nil
        case (let server?, let secret?):
            return PeerSecurity(serverPublicKey: try CurveKeyFiles.loadPublic(server), keyPair: try CurveKeyFiles.loadSecret(secret))
        default:
            throw BusError(code: .usage, message: "CURVE needs both --curve-server-key and --curve-secret-key")
        }
    }
}

/// Logging for long-running commands.
struct LoggingOptions: ParsableArguments {
    @Option(name: .customLong("log-level"), help: "Least severe level to log: trace, debug, info, notice, warning, error, critical (default: info).")
    var levelOption: String?

    @Option(name: .customLong("log-format"), help: "text (one line per event), or json (one JSON object per line).")
    var formatOption: String?

    var level: String { levelOption ?? (try? CLIConfig.load())?.logLevel ?? "info" }
    var format: String { formatOption ?? (try? CLIConfig.load())?.logFormat ?? "text" }

    func validate() throws {
        do { _ = try CLIConfig.load() } catch { throw ValidationError("\(error)") }
        guard Logger.Level(rawValue: level) != nil else {
            throw ValidationError("unknown log level '\(level)'; use trace, debug, info, notice, warning, error or critical")
        }
        guard ["text", "json"].contains(format) else {
            throw ValidationError("unknown log format '\(format)'; use text or json")
        }
    }

    func bootstrap(label: String) -> Logger {
        LogSetup.bootstrap(label: label, level: level, format: format)
    }
}

/// Prints what failed and what to do, and returns the documented exit code for it.
func reportFailure(_ error: any Error) -> ExitCode {
    guard let error = error as? BusError else {
        printError("error: \(error)")
        return ExitCode(3)
    }
    printError("error: \(error.message)")
    return ExitCode(error.code.exitCode)
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
