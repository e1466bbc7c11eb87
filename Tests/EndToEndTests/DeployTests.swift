import Foundation
import FluxBus
import FluxBusTools
import Testing

/// The deployment scripts in `deploy/`, run as an operator would: `local-cluster.sh` on this machine, and
/// `two-hosts.sh` across two network namespaces where this machine allows them.
@Suite("Deployment scripts", .timeLimit(.minutes(2)))
struct DeployTests {
    static var root: URL { Cluster.packageRoot }

    /// Runs `deploy/SCRIPT ARGUMENTS…` to completion with extra environment variables. Its output goes through
    /// files rather than pipes, so that neither can fill up while the other is read.
    ///
    /// Foundation learns that a child exited when a socket it shares with the child closes; a script whose background
    /// processes inherited that socket would never look finished. So this waits at most `limit`, and fails saying so.
    static func script(
        _ name: String, _ arguments: [String], environment: [String: String], limit: Duration = .seconds(60)
    ) throws -> CommandLineTests.Run {
        let capture = try temporaryDirectory("fluxbus-deploy-output")
        defer { try? FileManager.default.removeItem(at: capture) }
        let (outputFile, errorFile) = (capture.appendingPathComponent("out"), capture.appendingPathComponent("err"))
        try Data().write(to: outputFile)
        try Data().write(to: errorFile)
        let process = Process()
        process.executableURL = root.appendingPathComponent("deploy/\(name)")
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.currentDirectoryURL = FileManager.default.temporaryDirectory
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = try FileHandle(forWritingTo: outputFile)
        process.standardError = try FileHandle(forWritingTo: errorFile)
        try process.run()
        let deadline = ContinuousClock.now.advanced(by: limit)
        while process.isRunning {
            guard ContinuousClock.now < deadline else {
                throw ClusterError(
                    "deploy/\(name) \(arguments.joined(separator: " ")) did not finish within \(limit); do its "
                        + "background processes hold a descriptor it inherited?\n"
                        + ((try? String(contentsOf: errorFile, encoding: .utf8)) ?? ""))
            }
            usleep(20_000)
        }
        return .init(
            status: process.terminationStatus, output: try String(contentsOf: outputFile, encoding: .utf8),
            error: try String(contentsOf: errorFile, encoding: .utf8))
    }

    /// A fresh directory for one script run.
    static func temporaryDirectory(_ prefix: String) throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    /// The pids recorded in `*.pid` files, by process name.
    static func recordedPids(in directory: URL) throws -> [String: Int32] {
        var pids: [String: Int32] = [:]
        for file in try FileManager.default.contentsOfDirectory(atPath: directory.path) where file.hasSuffix(".pid") {
            let text = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
            pids[String(file.dropLast(4))] = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        return pids
    }

    /// Whether a process is gone: no such pid, or a zombie waiting for init to reap it.
    static func isGone(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else {
            return kill(pid, 0) != 0 && errno == ESRCH
        }
        // The state follows the parenthesised command name: "PID (COMM) S …".
        guard let close = stat.lastIndex(of: ")") else { return false }
        return stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).hasPrefix("Z")
    }

    static func decodeResult(_ run: CommandLineTests.Run) throws -> ResultView.JSON {
        try JSONDecoder().decode(ResultView.JSON.self, from: Data(run.output.utf8))
    }

    @Test func localClusterStartsDispatchesReportsAndStopsByRecordedPids() throws {
        let directory = try Self.temporaryDirectory("fluxbus-deploy")
        defer { try? FileManager.default.removeItem(at: directory) }
        let control = "ipc://\(directory.path)/ctl"
        let environment = [
            "FLUXBUS": Cluster.binary.path, "FLUXBUS_CLUSTER_DIR": directory.path,
            "FLUXBUS_CONTROL": control, "FLUXBUS_PUBLISH": "ipc://\(directory.path)/pub",
        ]
        // Whatever happens below, even a start that fails half-way, leave no process behind.
        defer { _ = try? Self.script("local-cluster.sh", ["stop"], environment: environment) }
        let start = try Self.script("local-cluster.sh", ["start", "2"], environment: environment)
        #expect(start.status == 0, "\(start.output)\n\(start.error)")
        #expect(start.output.contains("w1") && start.output.contains("w2") && start.output.contains("live"))
        let pids = try Self.recordedPids(in: directory)
        #expect(Set(pids.keys) == ["coordinator", "w1", "w2"])

        for _ in 1...3 {
            let dispatch = try CommandLineTests.fluxbus(["dispatch", "counter.add", #"{"by":3}"#, "--json", "--coordinator", control])
            #expect(dispatch.status == 0, "\(dispatch.output)\n\(dispatch.error)")
            let result = try Self.decodeResult(dispatch)
            #expect(result.status == "ok")
            #expect(Set(result.outcomes.map(\.worker)) == ["w1", "w2"])
        }
        let state = try CommandLineTests.fluxbus(["state", "counter", "--coordinator", control])
        #expect(state.output.contains(#"{"value":9}"#), "\(state.output)\n\(state.error)")

        let status = try Self.script("local-cluster.sh", ["status"], environment: environment)
        #expect(status.status == 0, "\(status.output)\n\(status.error)")
        for name in ["coordinator", "w1", "w2"] {
            #expect(status.output.range(of: "\(name) +pid [0-9]+ +alive", options: .regularExpression) != nil,
                "\(name) not alive in:\n\(status.output)")
        }
        #expect(status.output.contains("seq 3"))

        let stop = try Self.script("local-cluster.sh", ["stop"], environment: environment)
        #expect(stop.status == 0, "\(stop.output)\n\(stop.error)")
        for (name, pid) in pids { #expect(Self.isGone(pid), "\(name) (pid \(pid)) still running after stop") }
        #expect(try Self.recordedPids(in: directory).isEmpty, "stop left pid files")
        for name in ["coordinator", "w1", "w2"] {
            let log = (try? String(contentsOf: directory.appendingPathComponent("\(name).log"), encoding: .utf8)) ?? ""
            #expect(log.contains("stopped"), "\(name).log lacks its stop line:\n\(log)")
        }
        let after = try Self.script("local-cluster.sh", ["status"], environment: environment)
        #expect(after.status == 1)
        #expect(after.output.contains("not running"))
    }

    @Test func localClusterRefusesBadArgumentsWithUsageAndExitTwo() throws {
        let directory = try Self.temporaryDirectory("fluxbus-deploy")
        defer { try? FileManager.default.removeItem(at: directory) }
        let environment = ["FLUXBUS": Cluster.binary.path, "FLUXBUS_CLUSTER_DIR": directory.path]
        for arguments in [[], ["frobnicate"], ["start", "many"], ["start", "2", "--stor", "x=kv"], ["stop", "now"]] {
            let run = try Self.script("local-cluster.sh", arguments, environment: environment)
            #expect(run.status == 2, "\(arguments): \(run.error)")
            #expect(run.error.contains("usage: deploy/local-cluster.sh start"), "\(arguments): \(run.error)")
        }
        let twoHosts = try Self.script("two-hosts.sh", ["sideways"], environment: environment)
        #expect(twoHosts.status == 2)
        #expect(twoHosts.error.contains("usage: deploy/two-hosts.sh up"))
    }

    /// The coordinator in one namespace, the workers in another, TCP over the veth between them; the test talks to
    /// the coordinator through its ipc:// endpoint from this namespace.
    @Test(.enabled(if: TwoHosts.available, "needs root and iproute2 to create network namespaces; skipped on this machine"))
    func twoHostsRunsWorkersAcrossAVethAndDownRemovesItsNamespaces() throws {
        let directory = try Self.temporaryDirectory("fluxbus-2h")
        defer { try? FileManager.default.removeItem(at: directory) }
        let environment = ["FLUXBUS": Cluster.binary.path, "FLUXBUS_TWO_HOSTS_DIR": directory.path]
        defer { _ = try? Self.script("two-hosts.sh", ["down"], environment: environment) }
        let up = try Self.script("two-hosts.sh", ["up", "2"], environment: environment)
        #expect(up.status == 0, "\(up.output)\n\(up.error)")

        let state = try String(contentsOf: directory.appendingPathComponent("state"), encoding: .utf8)
        func recorded(_ key: String) -> String {
            state.split(separator: "\n").last { $0.hasPrefix("\(key)=") }.map { String($0.dropFirst(key.count + 1)) } ?? ""
        }
        let (coordinatorHost, workerHost, control) = (recorded("coordinator_host"), recorded("worker_host"), recorded("control"))
        #expect(!coordinatorHost.isEmpty && !workerHost.isEmpty && control.hasPrefix("ipc://"), "\(state)")
        #expect(try TwoHosts.run(["netns", "list"]).contains(workerHost))

        // The workers live in another network namespace than the coordinator and this test.
        let pids = try Self.recordedPids(in: directory)
        #expect(Set(pids.keys) == ["coordinator", "far1", "far2"])
        func network(_ pid: Int32) -> String {
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/ns/net")) ?? "?"
        }
        let own = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/ns/net")
        let coordinatorNetwork = network(try #require(pids["coordinator"]))
        for far in ["far1", "far2"] {
            let workerNetwork = network(try #require(pids[far]))
            #expect(workerNetwork != own && workerNetwork != coordinatorNetwork && workerNetwork != "?", "\(far) shares a network namespace")
        }
        #expect(coordinatorNetwork != own)

        // Dispatches cross the veth: both far workers acknowledge every one.
        for _ in 1...5 {
            let dispatch = try CommandLineTests.fluxbus(["dispatch", "counter.add", #"{"by":1}"#, "--json", "--coordinator", control])
            #expect(dispatch.status == 0, "\(dispatch.output)\n\(dispatch.error)")
            let result = try Self.decodeResult(dispatch)
            #expect(Set(result.outcomes.filter { $0.status == "ok" }.map(\.worker)) == ["far1", "far2"], "\(result.outcomes)")
        }
        let status = try CommandLineTests.fluxbus(["status", "--json", "--coordinator", control])
        let view = try JSONDecoder().decode(StatusView.JSON.self, from: Data(status.output.utf8))
        #expect(view.seq == 5)
        #expect(view.workers.map(\.state) == ["live", "live"])
        // The worker host's TCP connections go to the coordinator host's address on the veth.
        let connections = try TwoHosts.run(["netns", "exec", workerHost, "ss", "-tn"])
        #expect(connections.contains("\(recorded("coordinator_address")):7401"), "\(connections)")

        let down = try Self.script("two-hosts.sh", ["down"], environment: environment)
        #expect(down.status == 0, "\(down.output)\n\(down.error)")
        let namespaces = try TwoHosts.run(["netns", "list"])
        #expect(!namespaces.contains(coordinatorHost) && !namespaces.contains(workerHost), "left behind: \(namespaces)")
        for (name, pid) in pids { #expect(Self.isGone(pid), "\(name) (pid \(pid)) still running after down") }
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("state").path))
    }

    @Test(.enabled(if: TwoHosts.available, "needs root and iproute2 to create network namespaces; skipped on this machine"))
    func twoHostsDemoRunsAndLeavesNothingBehind() throws {
        let directory = try Self.temporaryDirectory("fluxbus-2h")
        defer { try? FileManager.default.removeItem(at: directory) }
        let environment = ["FLUXBUS": Cluster.binary.path, "FLUXBUS_TWO_HOSTS_DIR": directory.path]
        let before = try TwoHosts.run(["netns", "list"])
        let demo = try Self.script("two-hosts.sh", ["demo"], environment: environment)
        #expect(demo.status == 0, "\(demo.output)\n\(demo.error)")
        #expect(demo.output.contains("#5 counter.add: ok"))
        #expect(demo.output.contains("deleted namespace fbw") && demo.output.contains("deleted namespace fbc"))
        let after = try TwoHosts.run(["netns", "list"])
        let created = Set(after.split(separator: "\n").map { $0.split(separator: " ").first.map(String.init) ?? "" })
            .subtracting(before.split(separator: "\n").map { $0.split(separator: " ").first.map(String.init) ?? "" })
        #expect(created.filter { $0.hasPrefix("fbc") || $0.hasPrefix("fbw") }.isEmpty, "left behind: \(created)")
    }
}
