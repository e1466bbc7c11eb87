import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Child processes on this machine, each logging to its own file in one directory, stopped by their own process
/// ids only: SIGTERM first, SIGKILL for what is still running after a grace period.
package final class LocalProcesses: @unchecked Sendable {
    // @unchecked: `children` is only touched by the one task that drives the group, one call at a time.
    package let directory: URL
    private var children: [(name: String, process: Process)] = []
    /// Every name started, in order, so that logs stay readable after their process stopped.
    private var names: [String] = []

    /// Creates the group's directory under the temporary directory.
    package init(prefix: String) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    /// An `ipc://` endpoint in the group's directory.
    package func endpoint(_ name: String) -> String { "ipc://\(directory.path)/\(name)" }

    /// Starts a program, with its standard output and error in `NAME.log`.
    @discardableResult
    package func launch(_ name: String, executable: URL, arguments: [String], environment: [String: String] = [:]) throws -> Process {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        // TMPDIR is the group's directory: a worker without --data-dir keeps its crash marker there, and workers of
        // two groups under the same id must not read each other's.
        process.environment = ProcessInfo.processInfo.environment
            .merging(["TMPDIR": directory.path]) { $1 }.merging(environment) { $1 }
        let log = logURL(name)
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let handle = try FileHandle(forWritingTo: log)
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice
        // Relative paths a child writes, such as the coordinator's default ./fluxbus-data, stay in the group's directory.
        process.currentDirectoryURL = directory
        try process.run()
        children.append((name, process))
        if !names.contains(name) { names.append(name) }
        return process
    }

    package func logURL(_ name: String) -> URL { directory.appendingPathComponent("\(name).log") }

    package func log(_ name: String) -> String {
        (try? String(contentsOf: logURL(name), encoding: .utf8)) ?? ""
    }

    /// The tail of every log, for error messages.
    package func allLogs(lastCharacters: Int = 3000) -> String {
        names.map { "--- \($0) ---\n" + log($0).suffix(lastCharacters) }.joined(separator: "\n")
    }

    /// The process ids of the running children, by name.
    package var pids: [(name: String, pid: Int32)] { children.map { ($0.name, $0.process.processIdentifier) } }

    /// The process id of the latest child started under a name.
    package func pid(_ name: String) -> Int32? {
        children.last { $0.name == name }?.process.processIdentifier
    }

    /// Sends SIGTERM to the named children (all by default, the last started first), waits up to `grace`, then
    /// SIGKILLs what still runs.
    /// - Returns: each stopped child's exit status; a child killed by a signal reports 128 + the signal.
    @discardableResult
    package func stop(_ names: [String]? = nil, grace: Duration = .seconds(5)) async -> [String: Int32] {
        let targets = children.filter { names?.contains($0.name) ?? true }
        for (_, process) in targets.reversed() where process.isRunning { process.terminate() }
        let deadline = ContinuousClock.now.advanced(by: grace)
        while targets.contains(where: { $0.process.isRunning }), ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
        for (_, process) in targets where process.isRunning { kill(process.processIdentifier, SIGKILL) }
        var statuses: [String: Int32] = [:]
        for (name, process) in targets {
            process.waitUntilExit()
            statuses[name] = process.terminationReason == .uncaughtSignal ? 128 + process.terminationStatus : process.terminationStatus
        }
        children.removeAll { child in targets.contains { $0.process === child.process } }
        return statuses
    }

    /// Removes the directory (and its logs).
    package func removeDirectory() {
        try? FileManager.default.removeItem(at: directory)
    }

    deinit {
        for (_, process) in children where process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
}
