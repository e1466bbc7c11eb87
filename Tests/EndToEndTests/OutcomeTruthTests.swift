import Foundation
import FluxBus
import FluxBusProtocol
import FluxBusTools
import Testing

/// What a dispatch's answer promises, with real processes and real signals: a replica that did not answer is
/// `unknown` (exit 6), never "failed"; its outcome shows under the same request id once it reports; a coordinator
/// that was itself stopped does not blame its workers; and `--json` counts the replicas that answered.
@Suite("Outcomes tell the truth", .timeLimit(.minutes(1)))
struct OutcomeTruthTests {
    static func dispatch(_ cluster: Cluster, _ name: String, _ payload: String, requestID: String) async throws -> CommandExit {
        try await cluster.run(name, [
            "dispatch", "counter.add", payload, "--json", "--request-id", requestID, "--timeout", "8",
            "--coordinator", cluster.control,
        ])
    }

    /// What `dispatch --json` printed.
    static func result(_ run: CommandExit) throws -> ResultView.JSON {
        try JSONDecoder().decode(ResultView.JSON.self, from: Data(run.output.utf8))
    }

    /// A coordinator started with `coordinatorArguments`, `replicas` live workers w1… hosting `counter`, and a client.
    static func counterCluster(replicas: Int, _ coordinatorArguments: [String] = []) async throws -> (Cluster, BusClient) {
        let cluster = try Cluster()
        try cluster.startCoordinator(coordinatorArguments)
        for index in 1...replicas { try cluster.startWorker("w\(index)", stores: ["counter=counter"]) }
        let client = try await cluster.client()
        try await cluster.waitUntilLive(replicas, client: client)
        return (cluster, client)
    }

    static func counter(_ client: BusClient) async throws -> String {
        String(decoding: try await client.state(of: "counter").state, as: UTF8.self)
    }

    /// Before: `counter lost: no live replica`, exit 1, and after SIGCONT the counter moved anyway, so a client
    /// that sent it again under a new id counted twice.
    @Test func aStoppedReplicaMakesTheOutcomeUnknownAndTheSameRequestIDLearnsIt() async throws {
        let (cluster, client) = try await Self.counterCluster(replicas: 1, ["--ack-timeout", "1"])
        let worker = try #require(cluster.pid("w1"))

        kill(worker, SIGSTOP)
        let stopped = try await Self.dispatch(cluster, "while-stopped", #"{"by":5}"#, requestID: "add-5")
        #expect(stopped.status == 6, "\(stopped)")
        #expect(stopped.error.contains("not known yet") && stopped.error.contains("--request-id add-5"), "\(stopped)")
        let unknown = try Self.result(stopped)
        #expect(unknown.status == "unknown" && unknown.stores["counter"]?.status == "unknown", "\(unknown)")
        #expect(unknown.stores["counter"]?.unknown == 1 && unknown.stores["counter"]?.replicas == 0, "\(unknown)")

        kill(worker, SIGCONT)
        try await cluster.waitUntilLive(1, client: client)
        // The replica applied it when it ran again: once.
        #expect(try await Self.counter(client) == #"{"value":5}"#)
        // The same request id now shows what happened, and dispatches nothing new.
        var known: CommandExit?
        for _ in 0..<50 {
            let again = try await Self.dispatch(cluster, "asked-again", #"{"by":5}"#, requestID: "add-5")
            known = again
            if again.status != 6 { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        let answer = try #require(known)
        #expect(answer.status == 0, "\(answer)\n\(cluster.log("coordinator"))")
        let result = try Self.result(answer)
        #expect(result.seq == unknown.seq && result.stores["counter"]?.status == "ok", "\(result)")
        #expect(result.outcomes.contains { $0.worker == "w1" && $0.status == "ok" }, "\(result)")
        #expect(try await Self.counter(client) == #"{"value":5}"#)
        await client.close()
        await cluster.stop()
    }

    /// Before: on resuming, the coordinator counted its own stop as its workers' silence and marked them all lost,
    /// and each worker's queued HELLOs made it join again several times.
    @Test func aCoordinatorThatWasStoppedDoesNotBlameItsWorkers() async throws {
        let (cluster, client) = try await Self.counterCluster(replicas: 2)
        let coordinator = try #require(cluster.pid("coordinator"))

        kill(coordinator, SIGSTOP)
        // Three times the liveness deadline (four 250 ms heartbeats).
        try await Task.sleep(for: .seconds(3))
        kill(coordinator, SIGCONT)
        let after = try await Self.dispatch(cluster, "after-stall", #"{"by":1}"#, requestID: "after-stall")
        #expect(after.status == 0, "\(after)\n\(cluster.log("coordinator"))")
        let result = try Self.result(after)
        #expect(result.stores["counter"]?.applied == 2, "\(result)")
        let log = cluster.log("coordinator")
        #expect(log.contains("this coordinator did not run for a while"), "\(log)")
        #expect(!log.contains("silent for"), "\(log)")
        // The workers, which heard nothing meanwhile, said HELLO again, and HELLOs queued up: each joins again once.
        for worker in ["w1", "w2"] {
            let rejoins = log.split(separator: "\n").filter { $0.contains("worker lost") && $0.contains("worker=\(worker)") }
            #expect(rejoins.count <= 1, "\(log)")
        }
        await client.close()
        await cluster.stop()
    }

    /// Before: `"replicas":0` for a store whose two replicas both failed.
    @Test func jsonCountsTheReplicasThatAnsweredNotOnlyThoseThatSucceeded() async throws {
        let (cluster, client) = try await Self.counterCluster(replicas: 2)
        let failed = try await Self.dispatch(cluster, "bad-add", #"{"by":"x"}"#, requestID: "bad-add")
        #expect(failed.status == 1, "\(failed)")
        let result = try Self.result(failed)
        let counter = try #require(result.stores["counter"], "\(result)")
        #expect(counter.status == "failed" && counter.replicas == 2 && counter.applied == 0 && counter.unknown == 0, "\(counter)")
        await client.close()
        await cluster.stop()
    }
}
