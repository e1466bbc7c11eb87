import Foundation
import FluxBus
import FluxBusProtocol
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A coordinator and workers that `fluxbus bench` starts on this machine from its own executable, on
/// `tcp://127.0.0.1` with free ports, and stops afterwards: SIGTERM, then SIGKILL for what still runs.
/// Every child is also in ``BenchChildren``, which a Ctrl-C handler empties.
package final class BenchCluster: @unchecked Sendable {
    // @unchecked: one benchmark task drives a cluster, one call at a time (as LocalProcesses).
    package let processes: LocalProcesses
    package let control: String
    package let publish: String
    private let executable: URL
    private let coordinator: Process
    private var workerNames: [String] = []

    /// Starts a coordinator with `coordinatorArguments` added to its command line.
    /// - Throws: ``BusError`` `unreachable` with the coordinator's log when it exits at once (for example because it
    ///   rejects an option); ``waitUntilLive(_:client:within:)`` notices a later exit.
    package init(executable: URL, coordinatorArguments: [String] = []) async throws {
        self.executable = executable
        processes = try LocalProcesses(prefix: "fluxbus-bench")
        control = "tcp://127.0.0.1:\(try FreePort.next())"
        publish = "tcp://127.0.0.1:\(try FreePort.next())"
        let coordinator = try processes.launch(
            "coordinator", executable: executable,
            arguments: ["coordinator", "--control", control, "--publish", publish, "--log-level", "warning"] + coordinatorArguments)
        BenchChildren.shared.add(coordinator.processIdentifier)
        self.coordinator = coordinator
        try await Task.sleep(for: .milliseconds(300))
        do {
            try checkCoordinator()
        } catch {
            await stop()
            throw error
        }
    }

    /// Throws when the coordinator has exited, with the first line of its log (an unknown option, a port in use).
    /// - Throws: ``BusError`` `unreachable`, its message starting "the coordinator exited".
    package func checkCoordinator() throws {
        guard !coordinator.isRunning else { return }
        coordinator.waitUntilExit()
        let log = processes.log("coordinator").split(separator: "\n").first.map(String.init) ?? ""
        throw BusError(code: .unreachable, message: "the coordinator exited with status \(coordinator.terminationStatus): \(log)")
    }

    /// The coordinator's process id.
    package var coordinatorPID: Int32? { processes.pid("coordinator") }

    /// A worker's process id.
    package func pid(of worker: String) -> Int32? { processes.pid(worker) }

    /// Starts one worker process hosting `stores` (`NAME=KIND` specs).
    package func startWorker(_ id: String, stores: [String]) throws {
        let process = try processes.launch(
            id, executable: executable,
            arguments: ["worker", "--id", id, "--coordinator", control, "--log-level", "warning"] + stores.flatMap { ["--store", $0] })
        BenchChildren.shared.add(process.processIdentifier)
        workerNames.append(id)
    }

    /// Waits until `count` workers are live.
    package func waitUntilLive(_ count: Int, client: BusClient, within limit: Duration = .seconds(60)) async throws {
        let deadline = ContinuousClock.now.advanced(by: limit)
        while ContinuousClock.now < deadline {
            try checkCoordinator()
            if let status = try? await client.status(timeout: .milliseconds(500)), status.workers.filter({ $0.state == .live }).count >= count {
                return
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw BusError(code: .unreachable, message: "fewer than \(count) workers became live within \(limit)\n" + processes.allLogs())
    }

    /// Stops every process, the workers first, and removes the logs.
    package func stop() async {
        let pids = processes.pids.map(\.pid)
        await processes.stop(workerNames, grace: .seconds(5))
        await processes.stop(grace: .seconds(5))
        for pid in pids { BenchChildren.shared.remove(pid) }
        processes.removeDirectory()
    }
}

/// Every child process the benchmark started and has not yet stopped, so that a signal handler can stop them all.
package final class BenchChildren: Sendable {
    package static let shared = BenchChildren()
    private let pids = Mutex<Set<Int32>>([])

    package func add(_ pid: Int32) { pids.withLock { _ = $0.insert(pid) } }
    package func remove(_ pid: Int32) { pids.withLock { _ = $0.remove(pid) } }

    /// SIGTERM to every child, up to `grace` for them to exit, then SIGKILL. Blocking; for a signal handler.
    package func killAll(grace: Duration = .seconds(2)) {
        let targets = pids.withLock { $0 }
        for pid in targets { kill(pid, SIGTERM) }
        let deadline = ContinuousClock.now.advanced(by: grace)
        var remaining = targets
        while !remaining.isEmpty, ContinuousClock.now < deadline {
            remaining = remaining.filter { waitpid($0, nil, WNOHANG) == 0 }
            usleep(20_000)
        }
        for pid in remaining { kill(pid, SIGKILL) }
        pids.withLock { $0.removeAll() }
    }

    /// On SIGINT, SIGTERM or SIGHUP: stop every child, then exit 130 (128 + SIGINT) or 128 + the signal.
    /// Call once, early, and keep the returned sources alive for as long as the handlers should stay.
    package func installSignalHandlers() -> [any DispatchSourceSignal] {
        [SIGINT, SIGTERM, SIGHUP].map { signo in
            signal(signo, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signo, queue: .global())
            source.setEventHandler { [self] in
                FileHandle.standardError.write(Data("\nfluxbus bench: stopping its processes\n".utf8))
                killAll()
                exit(128 + signo)
            }
            source.resume()
            return source
        }
    }
}

/// A free TCP port on 127.0.0.1, from the kernel: bind port 0, read the port, close. Another process could take it
/// before the coordinator binds it; the kernel does not hand the same port out again at once, which is good enough
/// on a benchmark machine.
package enum FreePort {
    package static func next() throws -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw BusError(code: .usage, message: "cannot open a socket to find a free port (errno \(errno))") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw BusError(code: .usage, message: "cannot bind 127.0.0.1:0 to find a free port (errno \(errno))") }
        return UInt16(bigEndian: address.sin_port)
    }
}
