import Foundation
import FluxBusProtocol
import FluxBusTools

@testable import FluxBus

/// Real processes for end-to-end tests: the `fluxbus` binary built next to the test bundle (or any other program),
/// talking over `ipc://` endpoints in a private temporary directory, with every log kept in a file there.
final class Cluster: Sendable {
    let processes: LocalProcesses
    var directory: URL { processes.directory }
    let control: String
    let publish: String

    /// The package root, from this file's path: `Tests/EndToEndTests/Cluster.swift`.
    static let packageRoot = URL(fileURLWithPath: "\(#filePath)")
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The `fluxbus` executable that `swift build` put beside the test bundle.
    static let binary: URL = {
        let bundleDirectory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for candidate in [bundleDirectory, bundleDirectory.deletingLastPathComponent()] {
            let url = candidate.appendingPathComponent("fluxbus")
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        return URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent(".build/debug/fluxbus")
    }()

    init() throws {
        processes = try LocalProcesses(prefix: "fluxbus-e2e")
        control = processes.endpoint("control")
        publish = processes.endpoint("publish")
    }

    /// Starts `fluxbus ARGUMENTS…`, logging to `NAME.log` in the cluster's directory.
    @discardableResult
    func start(_ name: String, _ arguments: [String]) throws -> Process {
        try launch(name, executable: Self.binary, arguments: arguments)
    }

    /// The heartbeat test buses run with. 100 ms (a 400 ms liveness deadline) made replicas on this shared 2-core
    /// machine go `lost` whenever a build or another suite stalled them, and tests flaked on it; 250 ms gives a 1 s
    /// deadline, still short enough for tests that wait it out. A test that needs a faster deadline passes
    /// `--heartbeat-ms` in `extra` (the last value wins) and says why.
    static let heartbeatMilliseconds = 250

    /// Starts the coordinator on the cluster's endpoints.
    @discardableResult
    func startCoordinator(_ extra: [String] = []) throws -> Process {
        try start(
            "coordinator",
            ["coordinator", "--control", control, "--publish", publish, "--heartbeat-ms", "\(Self.heartbeatMilliseconds)"] + extra)
    }

    /// Starts a worker with `--store` specs.
    @discardableResult
    func startWorker(_ id: String, stores: [String], extra: [String] = []) throws -> Process {
        try start(id, ["worker", "--id", id, "--coordinator", control] + stores.flatMap { ["--store", $0] } + extra)
    }

    /// Starts any program, logging to `NAME.log`.
    @discardableResult
    func launch(_ name: String, executable: URL, arguments: [String], environment: [String: String] = [:]) throws -> Process {
        try processes.launch(name, executable: executable, arguments: arguments, environment: environment)
    }

    /// The process id of the latest process started under a name.
    func pid(_ name: String) -> Int32? { processes.pid(name) }

    func log(_ name: String) -> String { processes.log(name) }

    /// Every log, for failure messages; still there after ``stop(grace:)``.
    func allLogs() -> String { processes.allLogs() }

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

    /// SIGTERM to everything still running, the last started first (workers before the coordinator, so that it
    /// sees their goodbyes); SIGKILL for what still runs after `grace`.
    /// - Returns: each process's exit status by name.
    @discardableResult
    func stop(grace: Duration = .seconds(5)) async -> [String: Int32] {
        await processes.stop(grace: grace)
    }

    deinit {
        processes.removeDirectory()
    }
}

struct ClusterError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
