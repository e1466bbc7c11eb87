import Flux
import Foundation
import FluxBusProtocol
import Logging
import ZeroMQ

@testable import FluxBus

/// A coordinator and workers in this process, over `inproc://` with one shared context: real ZeroMQ, no network.
final class TestBus: Sendable {
    let context: ZMQContext
    let coordinator: Coordinator
    let control: String
    private let tasks = Mutex<[Task<Void, any Error>]>([])

    static func logger(_ label: String) -> Logger {
        var logger = Logger(label: label)
        logger.logLevel = ProcessInfo.processInfo.environment["FLUXBUS_TEST_LOG"].flatMap(Logger.Level.init(rawValue:)) ?? .critical
        return logger
    }

    /// Heartbeats in the test buses: short enough that a lost worker is written off within a second, long enough
    /// that a busy machine running the whole suite does not write off a live one (100 ms, a 400 ms deadline, did).
    static let heartbeat = Duration.milliseconds(250)

    init(configure: (inout CoordinatorConfiguration) -> Void = { _ in }) async throws {
        context = try ZMQContext()
        let name = UUID().uuidString
        var configuration = CoordinatorConfiguration(
            controlEndpoint: "inproc://control-\(name)", publishEndpoint: "inproc://publish-\(name)",
            heartbeatInterval: Self.heartbeat)
        configure(&configuration)
        coordinator = Coordinator(configuration: configuration, context: context, logger: Self.logger("coordinator"))
        control = configuration.controlEndpoint
        let coordinator = self.coordinator
        tasks.withLock { $0.append(Task { try await coordinator.run() }) }
        _ = try await coordinator.endpoints
    }

    /// Starts a worker; it runs until the bus stops (or it is refused).
    @discardableResult
    func startWorker(
        _ id: String, _ stores: [HostedStore], configure: (inout WorkerConfiguration) -> Void = { _ in }
    ) -> (worker: Worker, task: Task<Void, any Error>) {
        var configuration = WorkerConfiguration(id: id, coordinator: control, stores: stores, heartbeatInterval: Self.heartbeat)
        configure(&configuration)
        let worker = Worker(configuration: configuration, context: context, logger: Self.logger("worker.\(id)"))
        let task = Task { try await worker.run() }
        tasks.withLock { $0.append(task) }
        return (worker, task)
    }

    func client() async throws -> BusClient {
        try await BusClient(endpoint: control, context: context, timeout: .seconds(10))
    }

    /// Waits until `count` workers are live.
    func waitUntilLive(_ count: Int, client: BusClient) async throws {
        for _ in 0..<500 {
            let status = try await client.status()
            if status.workers.filter({ $0.state == .live }).count >= count { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw BusError(code: .unreachable, message: "fewer than \(count) workers became live")
    }

    func stop() async {
        let running = tasks.withLock { $0 }
        for task in running.reversed() { task.cancel() }
        for task in running { _ = await task.result }
        context.shutdown()
    }
}

import Synchronization
