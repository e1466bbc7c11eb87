import Foundation
import FluxBus
import FluxBusProtocol
import Testing

/// Issue 18, point 5, with the `crash` probe store: a handler that traps takes its worker down, and a worker restarted
/// after it replays the same action and traps again. Each restarted process reports the crash in its HELLO; at the
/// coordinator's `--poison-after` (3 by default) the action is marked poisoned for the store, and the next restart
/// skips it and goes live. Real processes, real traps (SIGILL from `fatalError`).
@Suite("A trapping handler (the crash probe)", .timeLimit(.minutes(1)))
struct PoisonActionTests {
    /// Starts a worker hosting the crash probe under id `w1`, logging to `NAME.log`, with Swift's backtracer off so
    /// that a trap ends the process at once.
    static func startCrashWorker(_ cluster: Cluster, _ name: String, _ extra: [String] = []) throws -> Process {
        try cluster.launch(name, executable: Cluster.binary, arguments: [
            "worker", "--id", "w1", "--coordinator", cluster.control, "--store", "crash=crash",
        ] + extra, environment: ["SWIFT_BACKTRACE": "enable=no"])
    }

    static func crashStatus(_ client: BusClient) async throws -> StoreStatus? {
        try await client.status().stores.first { $0.name == "crash" }
    }

    @Test func aRepeatedlyCrashingActionIsPoisonedAndSkippedAndTheWorkerGoesLive() async throws {
        let cluster = try Cluster()
        try cluster.startCoordinator(["--metrics-listen", "127.0.0.1:0"])
        let first = try Self.startCrashWorker(cluster, "w1-run1")
        let client = try await cluster.client()
        try await cluster.waitUntilLive(1, client: client)
        #expect(try await client.dispatch("crash.run", json: #"{"crash":false}"#).succeeded)

        let poison = try await client.dispatch("crash.run", json: #"{"crash":true}"#, requestID: "poison-1", timeout: .seconds(10))
        #expect(!poison.succeeded && poison.isUnknown, "\(poison.stores)")
        first.waitUntilExit()
        #expect(first.terminationReason == .uncaughtSignal, "\(cluster.log("w1-run1"))")

        // Restarted without --data-dir, it starts empty, replays #1 and #2 from the coordinator's log, and traps at #2.
        // Runs 2 and 3 report the crashes of runs 1 and 2; run 4 reports the third, which marks #2 poisoned.
        for run in 2...3 {
            let restarted = try Self.startCrashWorker(cluster, "w1-run\(run)")
            restarted.waitUntilExit()
            #expect(restarted.terminationReason == .uncaughtSignal, "\(cluster.log("w1-run\(run)"))")
            #expect(cluster.log("w1-run\(run)").contains("died in a store's handler"), "\(cluster.log("w1-run\(run)"))")
        }
        let crashing = try await Self.crashStatus(client)
        #expect(crashing?.crashingAt == poison.sequence && crashing?.crashCount == 2, "\(String(describing: crashing))")
        #expect(crashing?.poisonedCount == 0)
        let metricsPort = try await cluster.metricsPort(of: "coordinator")
        _ = try await Cluster.scrape(port: metricsPort) { $0[#"fluxbus_handler_crashes{store="crash"}"#] == 2 }

        _ = try Self.startCrashWorker(cluster, "w1-run4")
        try await cluster.waitUntilLive(1, client: client, within: .seconds(10))
        #expect(cluster.log("w1-run4").contains("skipping a poisoned action"), "\(cluster.log("w1-run4"))")
        #expect(cluster.log("coordinator").contains("action marked poisoned"), "\(cluster.log("coordinator"))")

        // The bus says so: the status, the request id's recorded answer, the history.
        let poisoned = try await Self.crashStatus(client)
        #expect(poisoned?.poisonedCount == 1 && poisoned?.lastPoisoned == poison.sequence, "\(String(describing: poisoned))")
        #expect(poisoned?.crashCount == 0, "the poisoned action's crashes are no longer pending")
        let scraped = try await Cluster.scrape(port: metricsPort) { $0[#"fluxbus_poisoned_actions{store="crash"}"#] == 1 }
        #expect(scraped[#"fluxbus_handler_crashes{store="crash"}"#] == 0)
        let retried = try await client.dispatch("crash.run", json: #"{"crash":true}"#, requestID: "poison-1")
        #expect(retried.sequence == poison.sequence)
        #expect(retried.stores.map(\.status) == [.poisoned], "\(retried.stores)")
        #expect(retried.stores.first?.error?.contains("crashed workers 3 times (SIGILL on w1)") == true, "\(retried.stores)")
        let tail = try await cluster.run("tail", ["tail", "--from", "\(poison.sequence)", "--count", "1", "--coordinator", cluster.control])
        #expect(tail.status == 0 && tail.output.contains("poisoned"), "\(tail)")

        // The store skipped #2 and applied #1; the bus goes on.
        #expect(try await client.dispatch("crash.run", json: #"{"crash":false}"#).succeeded)
        let state = try await client.state(of: "crash")
        #expect(String(decoding: state.state, as: UTF8.self).contains(#""runs":2"#), "\(String(decoding: state.state, as: UTF8.self))")
        await client.close()
        await cluster.stop()
    }

    @Test func withPoisonAfterZeroTheCrashLoopIsReportedAndNothingIsSkipped() async throws {
        let cluster = try Cluster()
        try cluster.startCoordinator(["--poison-after", "0"])
        _ = try Self.startCrashWorker(cluster, "w1-run1")
        let client = try await cluster.client()
        try await cluster.waitUntilLive(1, client: client)
        let poison = try await client.dispatch("crash.run", json: #"{"crash":true}"#, timeout: .seconds(10))
        #expect(poison.isUnknown)
        for run in 2...5 {
            let restarted = try Self.startCrashWorker(cluster, "w1-run\(run)")
            restarted.waitUntilExit()
            #expect(restarted.terminationReason == .uncaughtSignal, "\(cluster.log("w1-run\(run)"))")
        }
        let status = try await Self.crashStatus(client)
        #expect(status?.poisonedCount == 0)
        #expect(status?.crashingAt == poison.sequence && status?.crashCount == 4, "\(String(describing: status))")
        await client.close()
        await cluster.stop()
    }
}
