import Flux
import Foundation
import Logging
import ServiceLifecycle
import UnixSignals

/// A worker process in one call: parses the standard options (``WorkerOptions``), hosts the given store types,
/// runs the worker in a `ServiceGroup` with SIGTERM and SIGINT as graceful shutdown, and exits with the code
/// `fluxbus worker` uses for the same outcome.
///
/// ```swift
/// import FluxBus
/// import ShopStores
///
/// @main
/// struct ShopWorker {
///     static func main() async {
///         await WorkerMain.run(stores: [InventoryStore.self, CartStore.self])
///     }
/// }
/// ```
public enum WorkerMain {
    /// Runs a worker for `stores` and exits the process: 0 after SIGTERM or SIGINT (or `--help`), 2 for bad arguments
    /// or an unusable checkpoint, 4 when the coordinator refuses the worker, 5 for a storage failure, 3 otherwise.
    /// - Parameters:
    ///   - stores: the store types this program can host; `--store NAME` picks some of them.
    ///   - arguments: the command line without the program's name.
    public static func run(
        stores: [any Store.Type], arguments: [String] = Array(CommandLine.arguments.dropFirst())
    ) async -> Never {
        let program = URL(fileURLWithPath: CommandLine.arguments.first ?? "worker").lastPathComponent
        let options: WorkerOptions
        do {
            guard let parsed = try WorkerOptions.parse(arguments) else {
                print(WorkerHelp.text(program: program, stores: stores))
                exit(0)
            }
            options = parsed
        } catch {
            fail(error)
        }
        let logger = LogSetup.bootstrap(label: program, level: options.logLevel, format: options.logFormat)
        do {
            var configuration = WorkerConfiguration(
                id: options.id, coordinator: options.coordinator, stores: try options.hosted(from: stores))
            configuration.dataDirectory = options.dataDirectory
            configuration.checkpointInterval = .milliseconds(options.checkpointMillis)
            configuration.security = try options.security()
            configuration.reportsEvents = false  // nothing here reads them
            let worker = Worker(configuration: configuration, logger: logger)
            let group = ServiceGroup(services: [worker], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
            try await group.run()
            exit(0)
        } catch {
            fail(error)
        }
    }

    /// Prints what failed to standard error and exits with its code.
    private static func fail(_ error: any Error) -> Never {
        let busError = error as? BusError
        FileHandle.standardError.write(Data("error: \(busError?.message ?? "\(error)")\n".utf8))
        exit(busError?.code.exitCode ?? BusError.Code.unreachable.exitCode)
    }
}
