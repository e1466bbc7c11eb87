import Foundation
import FluxBus
import FluxBusProtocol

/// Real processes for end-to-end tests: the `fluxbus` binary built next to the test bundle (or any other program),
/// talking over `ipc://` endpoints in a private temporary directory, with every log kept in a file there.
final class Cluster: @unchecked Sendable {
    // @unchecked: `processes` is only touched from the test's own task, one call at a time.
    let directory: URL
    let control: String
    let publish: String
    private var processes: [(name: String, process: Process)] = []

    /// The `fluxbus` executable that `swift build` put beside the test bundle.
    static let binary: URL = {
        let bundleDirectory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for candidate in [bundleDirectory, bundleDirectory.deletingLastPathComponent()] {
            let url = candidate.appendingPathComponent("fluxbus")
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        let fallback = URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent(".build/debug/fluxbus")
        return fallback
    }()

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("fluxbus-e2e-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        control = "ipc://\(directory.path)/control"
        publish = "ipc://\(directory.path)/publish"
    }

    /// Starts `fluxbus ARGUMENTS…`, logging to `NAME.log` in the cluster's directory.
    @discardableResult
    func start(_ name: String, _ arguments: [String]) throws -> Process {
        try launch(name, executable: Self.binary, arguments: arguments)
    }

    /// Starts the coordinator on the cluster's endpoints.
    @discardableResult
    func startCoordinator(_ extra: [String] = []) throws -> Process {
        try start("coordinator", ["coordinator", "--control", control, "--publish", publish, "--heartbeat-ms", "100"] + extra)
    }

    /// Starts a worker with `--store` specs.
    @discardableResult
    func startWorker(_ id: String, stores: [String], extra: [String] = []) throws -> Process {
        try start(id, ["worker", "--id", id, "--coordinator", control] + stores.flatMap { ["--store", $0] } + extra)
    }

    /// Starts any program, logging to `NAME.log`.
    @discardableResult
    func launch(_ name: String, executable: URL, arguments: [String], environment: [String: String] = [:]) throws -> Process {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let log = directory.appendingPathComponent("\(name).log")
        FileManager.default.createFile(atPath: log.path, contents: nil)
        let handle = try FileHandle(forWritingTo: log)
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        processes.append((name, process))
        return process
    }

    /// The process id of the latest process started under a name.
    func pid(_ name: String) -> Int32? {
        processes.last { $0.name == name }?.process.processIdentifier
    }

    func log(_ name: String) -> String {
        (try? String(contentsOf: directory.appendingPathComponent("\(name).log"), encoding: .utf8)) ?? ""
    }

    func client(timeout: Duration = .seconds(10)) async throws -> BusClient {
        try await BusClient(endpoint: control, timeout: timeout)
    }

    /// Waits until `count` workers are live, or fails with the logs.
    func waitUntilLive(_ count: Int, client: BusClient, within limit: Duration = .seconds(20)) async throws {
        let deadline = ContinuousClock.now.advanced(by: limit)
        while ContinuousClock.now < deadline {
            if let status = try? await client.status(timeout: .seconds(1)),
                status.workers.filter({ $0.state == .live }).count >= count
            {
                return
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw ClusterError("fewer than \(count) workers became live within \(limit)\n" + allLogs())
    }

    /// Every log, for failure messages.
    func allLogs() -> String {
        processes.map { "--- \($0.name) ---\n" + log($0.name).suffix(3000) }.joined(separator: "\n")
    }

    /// Sends SIGTERM to everything still running, waits up to `grace`, then SIGKILLs the rest.
    /// - Returns: each process's exit status by name.
    @discardableResult
    func stop(grace: Duration = .seconds(5)) async -> [String: Int32] {
        // Workers first, so that the coordinator sees their goodbyes.
        for (_, process) in processes.reversed() where process.isRunning { process.terminate() }
        let deadline = ContinuousClock.now.advanced(by: grace)
        while processes.contains(where: { $0.process.isRunning }), ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
        for (_, process) in processes where process.isRunning { kill(process.processIdentifier, SIGKILL) }
        var statuses: [String: Int32] = [:]
        for (name, process) in processes {
            process.waitUntilExit()
            statuses[name] = process.terminationStatus
        }
        processes.removeAll()
        return statuses
    }

    deinit {
        for (_, process) in processes where process.isRunning { kill(process.processIdentifier, SIGKILL) }
        try? FileManager.default.removeItem(at: directory)
    }
}

struct ClusterError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
