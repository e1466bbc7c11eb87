import Foundation
import FluxBus
import FluxBusProtocol
import Testing

/// `fluxbus top` in a real terminal (tmux: send-keys to type, capture-pane to read the screen), and off one.
@Suite("fluxbus top", .timeLimit(.minutes(1)))
struct TopTests {
    /// A detached tmux session running `top`, then a shell that writes top's exit status and the terminal's settings
    /// (`stty -a`) to a file, so the test can see what top left behind.
    struct TmuxTop {
        let session = "fluxbus-top-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let report: URL

        init(cluster: Cluster) async throws {
            report = cluster.directory.appendingPathComponent("top.report")
            // `trap 'true' INT`: the shell outlives a Ctrl-C meant for top and still writes the report.
            let script = "trap 'true' INT; '\(Cluster.binary.path)' top --coordinator '\(cluster.control)' --interval 0.2; "
                + "echo exit=$? > '\(report.path)'; stty -a >> '\(report.path)'; sleep 60"
            try await Self.tmux(["new-session", "-d", "-s", session, "-x", "150", "-y", "40", script])
        }

        @discardableResult
        static func tmux(_ arguments: [String]) async throws -> String {
            let output = FileManager.default.temporaryDirectory.appendingPathComponent("fluxbus-tmux-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: output) }
            let pid = try spawn(["/usr/bin/env", "tmux"] + arguments, output: output.path)
            // Bounded, and without holding a thread of the cooperative pool: a tmux command that does not return
            // fails the test instead of hanging the suite.
            let deadline = ContinuousClock.now.advanced(by: .seconds(10))
            var status: Int32 = 0
            while waitpid(pid, &status, WNOHANG) == 0 {
                guard ContinuousClock.now < deadline else {
                    kill(pid, SIGKILL)
                    _ = waitpid(pid, &status, 0)
                    throw ClusterError("tmux \(arguments.joined(separator: " ")) did not return within 10 s")
                }
                try await Task.sleep(for: .milliseconds(10))
            }
            // Exited normally with status 0 (the raw wait status is then 0).
            guard status == 0 else {
                throw ClusterError("tmux \(arguments.joined(separator: " ")) failed (is tmux installed? `make deps-system`)")
            }
            return (try? String(contentsOf: output, encoding: .utf8)) ?? ""
        }

        /// Starts a program with its standard output in a file and every other descriptor closed. Not Foundation's
        /// `Process`: the first tmux command starts the tmux server, which would inherit the descriptors Foundation
        /// watches to learn that a child exited (its own, and those of the cluster's processes), so those children
        /// would never be seen to exit; reading its output through a pipe blocked forever for the same reason.
        static func spawn(_ argv: [String], output: String) throws -> pid_t {
            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
            posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
            // glibc ≥ 2.34 closes every descriptor from 3 on in the child; Swift's Glibc module does not import it.
            typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
            guard let closeFrom = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") else {
                throw ClusterError("this libc lacks posix_spawn_file_actions_addclosefrom_np (glibc 2.34 or later)")
            }
            _ = unsafeBitCast(closeFrom, to: CloseFrom.self)(&actions, 3)
            let arguments = argv.map { strdup($0) } + [nil]
            defer { arguments.forEach { free($0) } }
            var pid: pid_t = 0
            let result = posix_spawn(&pid, argv[0], &actions, nil, arguments, environ)
            guard result == 0 else { throw ClusterError("cannot start \(argv.joined(separator: " ")): error \(result)") }
            return pid
        }

        func screen() async throws -> String { try await Self.tmux(["capture-pane", "-p", "-t", session]) }

        /// `#{alternate_on}` and `#{cursor_flag}`: whether the pane shows the alternate screen, and the cursor.
        func modes() async throws -> String {
            try await Self.tmux(["display-message", "-p", "-t", session, "#{alternate_on} #{cursor_flag}"])
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }

        /// Polls the screen until `done` holds of it, or fails with the last screen.
        func waitForScreen(within limit: Duration = .seconds(20), _ done: (String) -> Bool) async throws -> String {
            let deadline = ContinuousClock.now.advanced(by: limit)
            var last = try await screen()
            while !done(last) {
                guard ContinuousClock.now < deadline else { throw ClusterError("the screen never showed it:\n\(last)") }
                try await Task.sleep(for: .milliseconds(50))
                last = try await screen()
            }
            return last
        }

        /// Waits for the report top's shell writes once top has exited.
        func waitForReport(within limit: Duration = .seconds(10)) async throws -> String {
            let deadline = ContinuousClock.now.advanced(by: limit)
            while ContinuousClock.now < deadline {
                if let text = try? String(contentsOf: report, encoding: .utf8), text.contains("speed") || text.contains("rows") {
                    return text
                }
                try await Task.sleep(for: .milliseconds(50))
            }
            throw ClusterError("top did not exit:\n\(try await screen())")
        }

        func close() async { _ = try? await Self.tmux(["kill-session", "-t", session]) }
    }

    static func startBus() async throws -> (Cluster, BusClient) {
        let cluster = try Cluster()
        try cluster.startCoordinator()
        try cluster.startWorker("w1", stores: ["counter=counter"])
        let client = try await cluster.client()
        try await cluster.waitUntilLive(1, client: client)
        for _ in 0..<3 { _ = try await client.dispatch("counter.add", json: #"{"by":1}"#) }
        return (cluster, client)
    }

    /// What a terminal looks like after top put it back: canonical input with echo, main screen, cursor shown.
    static func expectRestored(_ report: String, _ top: TmuxTop) async throws {
        #expect(report.hasPrefix("exit=0"), "\(report)")
        let settings = report.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == ";" }).map(String.init)
        #expect(settings.contains("icanon") && !settings.contains("-icanon"), "\(report)")
        #expect(settings.contains("echo") && !settings.contains("-echo"), "\(report)")
        let modes = try await top.modes()
        #expect(modes == "0 1")
    }

    /// Runs top in tmux on a bus that completed 3 dispatches, hands its first full screen to `body`, then presses
    /// `key` and checks that top exited 0 and put the terminal back.
    static func top(quittingWith key: String, _ body: (String, BusClient, TmuxTop) async throws -> Void = { _, _, _ in }) async throws {
        let (cluster, client) = try await startBus()
        let top = try await TmuxTop(cluster: cluster)
        do {
            let screen = try await top.waitForScreen { $0.contains("total 3 dispatches") && $0.contains("w1 ") }
            try await body(screen, client, top)
            try await TmuxTop.tmux(["send-keys", "-t", top.session, key])
            try await expectRestored(try await top.waitForReport(), top)
        } catch {
            await top.close()
            throw error
        }
        await top.close()
        await client.close()
        await cluster.stop()
    }

    @Test func inATerminalItRedrawsInPlaceAndQuitsOnQPuttingTheTerminalBack() async throws {
        try await Self.top(quittingWith: "q") { screen, client, top in
            #expect(screen.contains("fluxbus top   ipc://"))
            #expect(screen.contains("latency     p50 "))
            #expect(screen.contains("1 live, 0 catching-up, 0 lost, 0 gone   slowest w1 (lag 0)"))
            let row = try #require(screen.split(separator: "\n").first { $0.hasPrefix("w1 ") })
            #expect(row.contains("live") && row.contains("agree") && row.contains("counter"), "\(row)")
            let modes = try await top.modes()
            #expect(modes == "1 0")
            // Refreshed in place: another dispatch shows on the same screen.
            _ = try await client.dispatch("counter.add", json: #"{"by":1}"#)
            _ = try await top.waitForScreen { $0.contains("total 4 dispatches") }
        }
    }

    @Test func ctrlCAlsoPutsTheTerminalBack() async throws {
        try await Self.top(quittingWith: "C-c")
    }

    @Test func offATerminalItPrintsOneLinePerRefresh() async throws {
        let (cluster, client) = try await Self.startBus()
        let run = try CommandLineTests.fluxbus(["top", "--coordinator", cluster.control, "--interval", "0.1", "--count", "3"])
        #expect(run.status == 0)
        let lines = run.output.split(separator: "\n")
        #expect(lines.count == 3, "\(run.output)")
        for line in lines {
            #expect(!line.contains("\u{1B}"), "no escape codes in a pipe: \(line)")
            #expect(line.contains("seq 3 queue 0") && line.contains("workers 1/1 live slowest w1 (lag 0) digests agree"), "\(line)")
        }
        await client.close()
        await cluster.stop()
    }

    @Test func offATerminalAScriptLearnsThatTheCoordinatorIsUnreachable() throws {
        let cluster = try Cluster()
        let run = try CommandLineTests.fluxbus(["top", "--coordinator", cluster.control, "--count", "1", "--timeout", "0.5"])
        #expect(run.status == 3)
        #expect(run.output.hasPrefix("cannot get the status from \(cluster.control): no answer"), "\(run.output)")
        #expect(run.error.contains("is it running"), "\(run.error)")
    }
}
