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

        init(cluster: Cluster) throws {
            report = cluster.directory.appendingPathComponent("top.report")
            // `trap 'true' INT`: the shell outlives a Ctrl-C meant for top and still writes the report.
            let script = "trap 'true' INT; '\(Cluster.binary.path)' top --coordinator '\(cluster.control)' --interval 0.2; "
                + "echo exit=$? > '\(report.path)'; stty -a >> '\(report.path)'; sleep 60"
            try Self.tmux(["new-session", "-d", "-s", session, "-x", "150", "-y", "40", script])
        }

        @discardableResult
        static func tmux(_ arguments: [String]) throws -> String {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["tmux"] + arguments
            // A file, not a pipe: the first tmux command starts the tmux server, which inherits its standard output
            // and keeps it open, so reading a pipe to its end would block for as long as the server lives (a fresh
            // machine, with no server running yet, hung here).
            let output = FileManager.default.temporaryDirectory.appendingPathComponent("fluxbus-tmux-\(UUID().uuidString)")
            FileManager.default.createFile(atPath: output.path, contents: nil)
            defer { try? FileManager.default.removeItem(at: output) }
            let handle = try FileHandle(forWritingTo: output)
            defer { try? handle.close() }
            process.standardOutput = handle
            try process.run()
            // Bounded: a tmux command that does not return fails the test instead of hanging the suite.
            let deadline = ContinuousClock.now.advanced(by: .seconds(10))
            while process.isRunning, ContinuousClock.now < deadline { usleep(10_000) }
            guard !process.isRunning else {
                process.terminate()
                throw ClusterError("tmux \(arguments.joined(separator: " ")) did not return within 10 s")
            }
            let data = (try? Data(contentsOf: output)) ?? Data()
            guard process.terminationStatus == 0 else {
                throw ClusterError("tmux \(arguments.joined(separator: " ")) failed (is tmux installed? `make deps-system`)")
            }
            return String(decoding: data, as: UTF8.self)
        }

        func screen() throws -> String { try Self.tmux(["capture-pane", "-p", "-t", session]) }

        /// `#{alternate_on}` and `#{cursor_flag}`: whether the pane shows the alternate screen, and the cursor.
        func modes() throws -> String {
            try Self.tmux(["display-message", "-p", "-t", session, "#{alternate_on} #{cursor_flag}"])
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }

        /// Polls the screen until `done` holds of it, or fails with the last screen.
        func waitForScreen(within limit: Duration = .seconds(20), _ done: (String) -> Bool) async throws -> String {
            let deadline = ContinuousClock.now.advanced(by: limit)
            var last = try screen()
            while !done(last) {
                guard ContinuousClock.now < deadline else { throw ClusterError("the screen never showed it:\n\(last)") }
                try await Task.sleep(for: .milliseconds(50))
                last = try screen()
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
            throw ClusterError("top did not exit:\n\(try screen())")
        }

        func close() { _ = try? Self.tmux(["kill-session", "-t", session]) }
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
    static func expectRestored(_ report: String, _ top: TmuxTop) throws {
        #expect(report.hasPrefix("exit=0"), "\(report)")
        let settings = report.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == ";" }).map(String.init)
        #expect(settings.contains("icanon") && !settings.contains("-icanon"), "\(report)")
        #expect(settings.contains("echo") && !settings.contains("-echo"), "\(report)")
        #expect(try top.modes() == "0 1")
    }

    /// Runs top in tmux on a bus that completed 3 dispatches, hands its first full screen to `body`, then presses
    /// `key` and checks that top exited 0 and put the terminal back.
    static func top(quittingWith key: String, _ body: (String, BusClient, TmuxTop) async throws -> Void = { _, _, _ in }) async throws {
        let (cluster, client) = try await startBus()
        let top = try TmuxTop(cluster: cluster)
        defer { top.close() }
        let screen = try await top.waitForScreen { $0.contains("total 3 dispatches") && $0.contains("w1 ") }
        try await body(screen, client, top)
        try TmuxTop.tmux(["send-keys", "-t", top.session, key])
        try expectRestored(try await top.waitForReport(), top)
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
            #expect(try top.modes() == "1 0")
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
