import Flux
import FluxBus
import FluxBusProtocol
import Foundation
import GuideExamples
import Logging
import ServiceLifecycle
import Testing

/// Part 3's worker executable, as a process of its own: the `guide-worker` that `swift build` put beside this test
/// bundle joins an in-process coordinator over `ipc://`, serves dispatches, and exits 0 on SIGTERM.
@Suite("Guide, part 3: the worker executable", .timeLimit(.minutes(1)))
struct WorkerExecutableTests {
    static let binary: URL = {
        let bundleDirectory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for candidate in [bundleDirectory, bundleDirectory.deletingLastPathComponent()] {
            let url = candidate.appendingPathComponent("guide-worker")
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        return GuideSnippetTests.root.appendingPathComponent(".build/debug/guide-worker")
    }()

    /// A fresh folder for the `ipc://` endpoints and the worker's log.
    static func scratchDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("guide-worker-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    /// A coordinator on `ipc://` endpoints in `directory`, and its control endpoint.
    static func coordinator(in directory: URL) -> (control: String, coordinator: Coordinator) {
        let control = "ipc://\(directory.path)/control"
        let coordinator = Coordinator(
            configuration: .init(controlEndpoint: control, publishEndpoint: "ipc://\(directory.path)/publish"),
            logger: BusGuideTests.logger())
        return (control, coordinator)
    }

    @Test func theGuideWorkerHostsTheShopStoresInAnotherProcess() async throws {
        let directory = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (control, coordinator) = Self.coordinator(in: directory)
        let group = ServiceGroup(services: [coordinator], logger: BusGuideTests.logger())
        let running = Task { try await group.run() }
        _ = try await coordinator.endpoints

        let process = Process()
        process.executableURL = Self.binary
        process.arguments = ["--id", "shop-7", "--coordinator", control]
        let log = directory.appendingPathComponent("worker.log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let handle = try FileHandle(forWritingTo: log)
        process.standardOutput = handle
        process.standardError = handle
        try process.run()

        let client = try await BusClient(endpoint: control)
        do {
            try await client.waitUntilLive(["shop-7"], within: .seconds(20))
            _ = try await client.dispatch(Action(Shop.restock, .init(sku: "apple", quantity: 2)))
            let failed = try await client.dispatch(Action(Shop.addToCart, .init(sku: "apple", quantity: 3)))
            #expect(failed.stores.map(\.status) == [.failed, .skipped, .ok])
            let added = try await client.dispatch(Action(Shop.addToCart, .init(sku: "apple", quantity: 2)))
            #expect(added.succeeded)
            #expect(added.outcomes.allSatisfy { $0.worker == "shop-7" })
            let cart = try JSONDecoder().decode(CartStore.State.self, from: Data(try await client.state(of: "cart").state))
            #expect(cart.lines == ["apple": 2])
        } catch {
            Issue.record("\(error)\n--- worker log ---\n\((try? String(contentsOf: log, encoding: .utf8)) ?? "")")
        }

        process.terminate()   // SIGTERM: a graceful shutdown
        let deadline = ContinuousClock.now.advanced(by: .seconds(10))
        while process.isRunning, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        #expect(process.terminationReason == .exit)
        #expect(process.terminationStatus == 0)
        let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        #expect(text.contains("worker stopped"), "the worker logs its graceful stop:\n\(text)")

        await client.close()
        await group.triggerGracefulShutdown()
        try await running.value
    }

    /// WorkerMain exits as `fluxbus worker` does when the coordinator refuses it: 4, with the reason on standard error.
    /// Here another worker already hosts `cart` declared without its dependency on `inventory`.
    @Test func aRefusedGuideWorkerExits4AndSaysWhy() async throws {
        let directory = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (control, coordinator) = Self.coordinator(in: directory)
        let other = Worker(
            configuration: .init(id: "other", coordinator: control, stores: [HostedStore(CartStore.self, dependencies: [])]),
            logger: BusGuideTests.logger())
        let group = ServiceGroup(services: [coordinator, other], logger: BusGuideTests.logger())
        let running = Task { try await group.run() }
        let client = try await BusClient(endpoint: control)
        try await client.waitUntilLive(["other"])

        let process = Process()
        process.executableURL = Self.binary
        process.arguments = ["--id", "shop-8", "--coordinator", control, "--log-level", "critical"]
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let deadline = ContinuousClock.now.advanced(by: .seconds(20))
        while process.isRunning, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationReason == .exit)
        #expect(process.terminationStatus == 4, "\(text)")
        #expect(text.hasPrefix("error: "), "\(text)")
        #expect(text.contains("cart"), "the reason names the store: \(text)")

        await client.close()
        await group.triggerGracefulShutdown()
        try await running.value
    }
}
