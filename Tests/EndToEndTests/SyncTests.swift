import Foundation
import FluxBus
import FluxBusProtocol
import Testing

/// What `--sync always` promises, observed from outside: the coordinator's fsyncs, traced with `strace`. A SIGKILL
/// cannot show it (the kernel keeps a dead process's writes in its page cache, so `off` survives a SIGKILL too); a
/// power cut could, and what `always` does against one is sync the log before answering. So each of 30 dispatches,
/// sent one at a time, must see an `fsync` or `fdatasync` by the coordinator between the moment it is sent and the
/// moment its RESULT arrives; under `--sync off`, none may. The strace timestamps (`-ttt`) and the test's are both
/// the wall clock of this machine.
@Suite("--sync, traced", .timeLimit(.minutes(1)))
struct SyncTests {
    static let strace = "/usr/bin/strace"

    /// Whether strace is installed and may trace here (ptrace can be forbidden in containers).
    static let available: Bool = {
        guard FileManager.default.isExecutableFile(atPath: strace) else { return false }
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: strace)
        probe.arguments = ["-o", "/dev/null", "/bin/true"]
        probe.standardOutput = FileHandle.nullDevice
        probe.standardError = FileHandle.nullDevice
        guard (try? probe.run()) != nil else { return false }
        probe.waitUntilExit()
        return probe.terminationStatus == 0
    }()

    /// The times, in seconds since 1970, of the traced syncs.
    static func syncs(in trace: URL) throws -> [Double] {
        try String(contentsOf: trace, encoding: .utf8).split(separator: "\n").compactMap { line in
            // `PID SECONDS.MICROS fdatasync(5) = 0`
            let fields = line.split(separator: " ", maxSplits: 2)
            guard fields.count == 3, fields[2].hasPrefix("fsync(") || fields[2].hasPrefix("fdatasync(") else { return nil }
            return Double(fields[1])
        }
    }

    @Test(.enabled(if: available, "needs strace, allowed to trace (apt-get install strace)"), arguments: ["always", "off"])
    func eachDispatchIsSyncedBeforeItsResultUnderAlwaysOnly(sync: String) async throws {
        let cluster = try Cluster()
        let trace = cluster.directory.appendingPathComponent("coordinator.strace")
        let tracer = try cluster.launch("coordinator", executable: URL(fileURLWithPath: Self.strace), arguments: [
            "-f", "-qq", "-ttt", "--seccomp-bpf", "-e", "trace=fsync,fdatasync", "-o", trace.path,
            Cluster.binary.path, "coordinator", "--control", cluster.control, "--publish", cluster.publish,
            "--heartbeat-ms", "\(Cluster.heartbeatMilliseconds)", "--sync", sync,
        ])
        try cluster.startWorker("w1", stores: ["kv=kv"])
        let client = try await cluster.client()
        try await cluster.waitUntilLive(1, client: client)
        #expect(try await client.status().logSync == sync)

        var windows: [(sent: Double, answered: Double)] = []
        var history = KVHistory()
        for index in 1...30 {
            let sent = Date().timeIntervalSince1970
            try await history.dispatch(index, client: client)
            windows.append((sent, Date().timeIntervalSince1970))
        }
        await client.close()

        // Stop the coordinator itself (strace's child), so that strace writes everything and exits.
        let children = try String(contentsOfFile: "/proc/\(tracer.processIdentifier)/task/\(tracer.processIdentifier)/children", encoding: .utf8)
        let coordinator = try #require(children.split(separator: " ").first.flatMap { Int32($0) }, "strace has no child")
        kill(coordinator, SIGTERM)
        let statuses = await cluster.stop(grace: .seconds(10))
        #expect(statuses["coordinator"] == 0, "\(statuses)\n\(cluster.allLogs())")

        let syncs = try Self.syncs(in: trace)
        let unsynced = windows.enumerated().filter { _, window in !syncs.contains { $0 >= window.sent && $0 <= window.answered } }
        if sync == "always" {
            #expect(unsynced.isEmpty, "\(unsynced.count) of 30 dispatches were answered with no sync by the coordinator, e.g. #\(unsynced.first.map { $0.offset + 1 } ?? 0)")
        } else {
            #expect(unsynced.count == 30, "under --sync off, \(30 - unsynced.count) dispatches saw a sync")
        }
    }
}
