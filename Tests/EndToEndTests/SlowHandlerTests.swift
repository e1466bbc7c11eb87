import Flux
import Foundation
import FluxBusProtocol
import FluxBusTools
import Testing

@testable import FluxBus

/// A handler that blocks its worker for seconds (the `sleep` probe kind), with real processes and real signals:
/// the worker stays live while it runs, the acknowledgement deadline (not the heartbeat's) judges the dispatch, and
/// SIGTERM stops the worker within a few seconds even mid-handler.
@Suite("Slow handlers", .timeLimit(.minutes(1)))
struct SlowHandlerTests {
    static func json<T: Decodable>(_ type: T.Type, _ text: String) throws -> T {
        try JSONDecoder().decode(type, from: Data(text.utf8))
    }

    /// Polls until `condition` holds or `limit` passes; the bound is generous, only a liveness bound.
    static func eventually(within limit: Duration, _ condition: () throws -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now.advanced(by: limit)
        while ContinuousClock.now < deadline {
            if try condition() { return true }
            try await Task.sleep(for: .milliseconds(50))
        }
        return try condition()
    }

    /// Before: the worker went `lost` two seconds into the handler, and SIGTERM waited for the handler to return.
    @Test func aWorkerInsideATenSecondHandlerStaysLiveAndStopsOnSIGTERM() async throws {
        let cluster = try Cluster()
        // The ack deadline is past the handler, so that only the heartbeat could write the worker off.
        try cluster.startCoordinator(["--ack-timeout", "60"])
        let dataDirectory = cluster.directory.appendingPathComponent("w1-data").path
        let worker = try cluster.startWorker(
            "w1", stores: ["sleep=sleep"], extra: ["--data-dir", dataDirectory, "--checkpoint-ms", "100"])
        let client = try await cluster.client()
        try await cluster.waitUntilLive(1, client: client)
        let first = try await client.dispatch(Action(SleepStore.sleepFor, .init(ms: 1)))
        #expect(first.succeeded, "\(first)")
        let checkpoints = CheckpointFile(directory: dataDirectory, worker: "w1")
        let saved = try await Self.eventually(within: .seconds(10)) { try checkpoints.load()?.lastApplied == first.sequence }
        #expect(saved, "the checkpoint reached #\(first.sequence)")

        let slow = try cluster.start("slow", [
            "dispatch", "sleep.for", #"{"ms":10000}"#, "--json", "--timeout", "30", "--coordinator", cluster.control,
        ])
        // The guard logs its first beat for the handler; then wait past the liveness deadline (four 250 ms beats).
        let beating = try await Self.eventually(within: .seconds(8)) { cluster.log("w1").contains("a handler is taking long") }
        #expect(beating, "\(cluster.allLogs())")
        try await Task.sleep(for: .milliseconds(4 * Cluster.heartbeatMilliseconds + 1_000))
        let status = try await cluster.run("status", ["status", "--json", "--coordinator", cluster.control])
        #expect(status.status == 0, "\(status)")
        let view = try Self.json(StatusView.JSON.self, status.output)
        #expect(view.workers.map(\.state) == ["live"], "\(status.output)\n\(cluster.log("coordinator"))")
        #expect(slow.isRunning, "the dispatch still waits for the handler")

        kill(worker.processIdentifier, SIGTERM)
        let exited = try await Self.eventually(within: .seconds(5)) { !worker.isRunning }
        #expect(exited, "w1 still runs 5 s after SIGTERM\n\(cluster.log("w1"))")
        if exited {
            #expect(worker.terminationReason == .exit && worker.terminationStatus == 0, "\(worker.terminationStatus)")
        }
        #expect(cluster.log("w1").contains("stopping without waiting for the handler in hand"), "\(cluster.log("w1"))")

        // The worker said goodbye without an ACK: the dispatch's outcome is unknown (exit 6), not failed.
        let answered = try await Self.eventually(within: .seconds(10)) { !slow.isRunning }
        #expect(answered && slow.terminationStatus == 6, "\(cluster.log("slow"))")
        #expect(cluster.log("slow").contains(#""status":"unknown""#), "\(cluster.log("slow"))")
        // The checkpoint stands as before the handler: its states match its sequence.
        let checkpoint = try #require(try checkpoints.load())
        #expect(checkpoint.lastApplied == first.sequence)
        let state = try #require(checkpoint.stores.first { $0.name == "sleep" }?.state)
        #expect(try JSONDecoder().decode(SleepStore.State.self, from: state).sleeps == 1)
        await client.close()
        await cluster.stop()
    }

    /// Before: the worker was written off at the heartbeat deadline, two seconds in, and joined again only after
    /// the handler returned. Now the ack deadline (5 s) decides: unknown at first, then the real outcome.
    @Test func aHandlerPastTheAckDeadlineIsUnknownThenItsOutcomeIsKnown() async throws {
        let cluster = try Cluster()
        try cluster.startCoordinator()
        try cluster.startWorker("w1", stores: ["sleep=sleep"])
        let client = try await cluster.client()
        try await cluster.waitUntilLive(1, client: client)
        let arguments = [
            "dispatch", "sleep.for", #"{"ms":7000}"#, "--json", "--request-id", "slow-7", "--timeout", "20",
            "--coordinator", cluster.control,
        ]
        let first = try await cluster.run("slow", arguments)
        #expect(first.status == 6, "\(first)\n\(cluster.log("coordinator"))")
        let unknown = try Self.json(ResultView.JSON.self, first.output)
        #expect(unknown.stores["sleep"]?.status == "unknown", "\(unknown)")
        let log = cluster.log("coordinator")
        #expect(!log.contains("silent for"), "written off by the heartbeat deadline:\n\(log)")

        var known: CommandExit?
        for attempt in 0..<100 {
            let again = try await cluster.run("asked-again-\(attempt)", arguments)
            known = again
            if again.status != 6 { break }
            try await Task.sleep(for: .milliseconds(200))
        }
        let answer = try #require(known)
        #expect(answer.status == 0, "\(answer)\n\(cluster.allLogs())")
        let result = try Self.json(ResultView.JSON.self, answer.output)
        #expect(result.seq == unknown.seq && result.stores["sleep"]?.status == "ok", "\(result)")
        #expect(result.outcomes.contains { $0.worker == "w1" && $0.status == "ok" }, "\(result)")

        // It joined again and takes part in the next dispatch.
        try await cluster.waitUntilLive(1, client: client)
        let next = try await client.dispatch(Action(SleepStore.sleepFor, .init(ms: 1)))
        #expect(next.succeeded && next.outcomes.contains { $0.worker == "w1" && $0.status == .ok }, "\(next)")
        let state = try Self.json(SleepStore.State.self, String(decoding: try await client.state(of: "sleep").state, as: UTF8.self))
        #expect(state.sleeps == 2 && state.ms == 7_001, "\(state)")
        await client.close()
        await cluster.stop()
    }

    /// An async handler (`sleep.await`, which suspends in `Task.sleep`) runs on a real worker: past the liveness
    /// deadline (four 250 ms beats) and within the acknowledgement deadline, the worker is never written off, the
    /// dispatch succeeds, and the next one runs after it, in order.
    @Test func anAsyncHandlerRunsOnAWorkerAndIsJudgedByTheAckDeadline() async throws {
        let cluster = try Cluster()
        try cluster.startCoordinator()
        try cluster.startWorker("w1", stores: ["sleep=sleep"])
        let client = try await cluster.client()
        try await cluster.waitUntilLive(1, client: client)
        let awaited = try await client.dispatch(Action(SleepStore.sleepAwait, .init(ms: 2_500)), timeout: .seconds(20))
        #expect(awaited.succeeded && awaited.outcomes.map(\.worker) == ["w1"], "\(awaited)\n\(cluster.allLogs())")
        #expect(awaited.elapsedMicros >= 2_500_000, "it waited for the handler: \(awaited.elapsedMicros) µs")
        #expect(!cluster.log("coordinator").contains("silent for"), "written off:\n\(cluster.log("coordinator"))")
        let next = try await client.dispatch(Action(SleepStore.sleepAwait, .init(ms: 1)))
        #expect(next.succeeded && next.sequence == awaited.sequence + 1, "\(next)")
        let refused = try await client.dispatch(Action(SleepStore.sleepAwait, .init(ms: -1)))
        #expect(refused.stores.first?.status == .failed && refused.stores.first?.error?.contains("sleep.await takes") == true)
        let state = try Self.json(SleepStore.State.self, String(decoding: try await client.state(of: "sleep").state, as: UTF8.self))
        #expect(state.sleeps == 2 && state.ms == 2_501, "\(state)")
        await client.close()
        await cluster.stop()
    }
}
