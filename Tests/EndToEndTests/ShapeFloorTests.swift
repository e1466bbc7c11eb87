import Foundation
import Testing
import ZeroMQ

/// The raw peers of `fluxbus bench`'s floors in a scenario's shape, as real processes: a message goes through all of
/// flight's stages and comes back, and the relay syncs where a `--sync always` coordinator syncs its log (traced with
/// `strace`, as `SyncTests` traces the coordinator). What the floors measure is in `fluxbus bench`, not here.
@Suite("The benchmark's floors in a scenario's shape", .timeLimit(.minutes(1)))
struct ShapeFloorTests {
    /// Sends `payload` from `dealer` until it comes back: the first publications can reach a stage before its SUB
    /// has subscribed (ZeroMQ's slow joiner), and are then lost.
    static func roundTrip(_ dealer: ZMQSocket, _ payload: [UInt8], within limit: Duration = .seconds(20)) throws -> Bool {
        let deadline = ContinuousClock.now.advanced(by: limit)
        while ContinuousClock.now < deadline {
            _ = try dealer.send(payload)
            while let frames = try dealer.receive(timeout: .milliseconds(200)) {
                if frames == [payload] { return true }
            }
        }
        return false
    }

    /// Sends `payload` once and waits for it to come back.
    static func exchange(_ dealer: ZMQSocket, _ payload: [UInt8]) throws -> Bool {
        _ = try dealer.send(payload)
        return try dealer.receive(timeout: .seconds(10)) == [payload]
    }

    @Test(.enabled(if: SyncTests.available, "needs strace, allowed to trace (apt-get install strace)"), arguments: [true, false])
    func flightsRelayPassesEachMessageAlongTheStagesAndSyncsThreeTimes(synced: Bool) async throws {
        let cluster = try Cluster()
        let trace = cluster.directory.appendingPathComponent("relay.strace")
        let pages = cluster.directory.appendingPathComponent("floor.pages")
        try cluster.launch("relay", executable: URL(fileURLWithPath: SyncTests.strace), arguments: [
            "-f", "-qq", "-ttt", "--seccomp-bpf", "-e", "trace=fdatasync", "-o", trace.path,
            Cluster.binary.path, "bench-peer", "flight-relay", "--endpoint", cluster.control, "--publish", cluster.publish,
        ] + (synced ? ["--sync-file", pages.path] : []))
        for stage in 1...3 {
            try cluster.start("stage-\(stage)", ["bench-peer", "stage", "--stage", "\(stage)", "--endpoint", cluster.control, "--publish", cluster.publish])
        }
        let context = try ZMQContext()
        let dealer = try ZMQSocket(.dealer, context: context)
        try dealer.set(.linger, to: .zero)
        try dealer.connect(cluster.control)
        #expect(try Self.roundTrip(dealer, Array("warm-up".utf8)), "no answer through the stages\n\(cluster.allLogs())")
        // Lost warm-up publications were synced at once; a round trip came back, so none is still on its way.
        var windows: [(sent: Double, answered: Double)] = []
        for index in 0..<20 {
            let sent = Date().timeIntervalSince1970
            #expect(try Self.exchange(dealer, Array("message \(index)".utf8)))
            windows.append((sent, Date().timeIntervalSince1970))
        }
        dealer.close()
        context.shutdown()
        // Stop the relay itself (strace's child), so that strace writes everything and exits.
        let tracer = try #require(cluster.pid("relay"))
        let children = try String(contentsOfFile: "/proc/\(tracer)/task/\(tracer)/children", encoding: .utf8)
        let relay = try #require(children.split(separator: " ").first.flatMap { Int32($0) }, "strace has no child")
        kill(relay, SIGTERM)
        await cluster.stop(grace: .seconds(5))

        let syncs = try SyncTests.syncs(in: trace)
        let counts = windows.map { window in syncs.filter { $0 >= window.sent && $0 <= window.answered }.count }
        if synced {
            // After the publish (the action's record), and before each of the two hand-overs (a decision each).
            #expect(counts == Array(repeating: 3, count: 20), "fdatasyncs per round trip: \(counts)")
            let size = try FileManager.default.attributesOfItem(atPath: pages.path)[.size] as? Int
            #expect(size == 64 * 4_096)
        } else {
            #expect(syncs.isEmpty, "the unsynced floor synced \(syncs.count) times")
        }
    }

    @Test func theStatusFloorsRelaySendsEachMessageBackToItsSender() async throws {
        let cluster = try Cluster()
        try cluster.start("relay", ["bench-peer", "reflect", "--endpoint", cluster.control])
        let context = try ZMQContext()
        let dealers = try (0..<2).map { _ in try ZMQSocket(.dealer, context: context) }
        for dealer in dealers {
            try dealer.set(.linger, to: .zero)
            try dealer.connect(cluster.control)
        }
        // Each sender gets its own message back, and only its own.
        #expect(try Self.roundTrip(dealers[0], Array("first".utf8)))
        #expect(try Self.roundTrip(dealers[1], Array("second".utf8)))
        while let late = try dealers[0].receive(timeout: .milliseconds(100)) {
            #expect(late == [Array("first".utf8)], "the first sender got someone else's message")
        }
        for dealer in dealers { dealer.close() }
        context.shutdown()
        await cluster.stop()
    }

    @Test func theClientPeerMeasuresRoundTripsThroughARelayAndExits() async throws {
        let cluster = try Cluster()
        try cluster.start("relay", ["bench-peer", "reflect", "--endpoint", cluster.control])
        let run = try CommandLineTests.fluxbus(["bench-peer", "client", "--endpoint", cluster.control, "--count", "50"])
        await cluster.stop()
        #expect(run.status == 0, "\(run.error)")
        #expect(run.output.hasPrefix("50 round trips: p50 "), "\(run.output)")
    }

    @Test(arguments: [
        (["stage", "--endpoint", "tcp://127.0.0.1:1", "--publish", "tcp://127.0.0.1:2"], "--stage 1, 2 or 3"),
        (["flight-relay", "--endpoint", "tcp://127.0.0.1:1"], "--publish"),
        (["client", "--endpoint", "tcp://127.0.0.1:1", "--count", "0"], "--count must be at least 1"),
        (["mirror", "--endpoint", "tcp://127.0.0.1:1"], "flight-relay"),
    ])
    func aPeerWithoutWhatItsRoleNeedsIsRefusedWithAReason(arguments: [String], reason: String) throws {
        let run = try CommandLineTests.fluxbus(["bench-peer"] + arguments)
        #expect(run.status != 0)
        #expect(run.error.contains(reason), "\(run.error)")
    }
}
