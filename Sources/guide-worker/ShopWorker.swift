// guide:begin worker-main
import FluxBus
import Foundation
import GuideExamples   // the library that holds your stores
import Logging
import ServiceLifecycle
import UnixSignals

/// A worker process for the shop's stores: `guide-worker [ID] [CONTROL-ENDPOINT]`.
/// SIGTERM or SIGINT finishes the dispatch in hand, says goodbye to the coordinator, and exits 0.
@main
struct ShopWorker {
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        let id = arguments.first ?? "shop-1"
        let coordinator = arguments.dropFirst().first
            ?? ProcessInfo.processInfo.environment[BusDefaults.coordinatorEnvironmentVariable]
            ?? BusDefaults.controlEndpoint
        let logger = Logger(label: "shop-worker")
        let worker = Worker(
            configuration: .init(id: id, coordinator: coordinator, stores: [
                HostedStore(InventoryStore.self), HostedStore(CartStore.self), HostedStore(AuditStore.self),
            ]),
            logger: logger)
        let group = ServiceGroup(services: [worker], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        do {
            try await group.run()
        } catch let error as BusError where error.code == .refused {
            logger.critical("the coordinator refused this worker: \(error)")
            exit(4)   // the exit code `fluxbus worker` uses for a refusal
        } catch {
            logger.critical("the worker stopped: \(error)")
            exit(1)
        }
    }
}
// guide:end worker-main
