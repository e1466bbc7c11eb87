import Foundation

/// The foreign worker: `Tests/ForeignWorker/fluxbus_worker.py`, run by the `.venv` that `make deps` creates.
extension Cluster {
    /// The virtual environment's Python, which has pyzmq.
    static var python: URL { packageRoot.appendingPathComponent(".venv/bin/python") }

    /// The Python worker written from `docs/PROTOCOL.md`.
    static var foreignWorker: URL { packageRoot.appendingPathComponent("Tests/ForeignWorker/fluxbus_worker.py") }

    /// ``python``, after checking (once per test process) that it runs and imports zmq.
    /// - Throws: ``ClusterError`` telling to run `make deps` when it does not.
    static func requirePython() async throws -> URL {
        try await pythonCheck.value
    }

    /// The check behind ``requirePython()``. It waits for the child without blocking a thread of the cooperative
    /// pool (two threads on these machines), which parallel tests share.
    private static let pythonCheck = Task<URL, any Error> {
        let hint = "run `make deps` in \(packageRoot.path) to create .venv with pyzmq"
        guard FileManager.default.isExecutableFile(atPath: python.path) else {
            throw ClusterError("\(python.path) is missing: \(hint)")
        }
        let check = Process()
        check.executableURL = python
        check.arguments = ["-c", "import zmq"]
        check.standardOutput = FileHandle.nullDevice
        check.standardError = FileHandle.nullDevice
        try check.run()
        while check.isRunning { try await Task.sleep(for: .milliseconds(10)) }
        guard check.terminationStatus == 0 else {
            throw ClusterError("\(python.path) cannot import zmq: \(hint)")
        }
        return python
    }

    /// Starts the Python worker hosting one counter store, logging to `ID.log`.
    @discardableResult
    func startPythonWorker(_ id: String, store: String, options: [String] = []) async throws -> Process {
        try launch(
            id, executable: try await Self.requirePython(),
            arguments: ["-u", Self.foreignWorker.path, "--id", id, "--coordinator", control, "--store", store] + options)
    }
}
