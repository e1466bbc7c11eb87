import Foundation
import FluxBus
import FluxBusProtocol
import Testing

/// Issue 18, point 2: a second process started with a live worker's id took that worker's place silently (the ROUTER
/// hands a routing id to the newest connection), and the first went on logging "live" with its stores gone from the
/// bus. Now the newcomer is refused, and exits 4 naming the id and where its holder is, while the holder keeps
/// working; a worker restarted after a crash still gets its id back.
@Suite("A worker id is held by one process", .timeLimit(.minutes(1)))
struct DuplicateWorkerTests {
    @Test func aSecondProcessWithALiveWorkersIDIsRefusedAndTheFirstKeepsWorking() async throws {
        let cluster = try Cluster()
        try cluster.startCoordinator()
        let original = try cluster.startWorker("w1", stores: ["counter=counter"])
        let client = try await cluster.client()
        try await cluster.waitUntilLive(1, client: client)
        #expect(try await client.dispatch("counter.add", json: #"{"by":1}"#).succeeded)

        let duplicate = try cluster.start("w1-duplicate", [
            "worker", "--id", "w1", "--coordinator", cluster.control, "--store", "counter=counter",
        ])
        // Dispatching meanwhile: the original must acknowledge each, through the duplicate's claims.
        var applied = 1
        while duplicate.isRunning {
            let result = try await client.dispatch("counter.add", json: #"{"by":1}"#, timeout: .seconds(5))
            #expect(result.succeeded, "\(result.stores)\n\(cluster.allLogs())")
            applied += 1
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(duplicate.terminationStatus == 4, "\(cluster.log("w1-duplicate"))")
        let refusal = cluster.log("w1-duplicate")
        #expect(refusal.contains("worker id `w1` is held by a live process at"), "\(refusal)")
        #expect(refusal.contains("stop one of the two, or give this one another --id"), "\(refusal)")

        let after = try await client.dispatch("counter.add", json: #"{"by":1}"#, timeout: .seconds(5))
        applied += 1
        #expect(after.succeeded, "\(after.stores)")
        #expect(Self.applied(after) == 1, "\(after.stores)")
        #expect(original.isRunning)
        let status = try await client.status()
        #expect(status.workers.map(\.id) == ["w1"] && status.workers.first?.state == .live, "\(status.workers)")
        let state = String(decoding: try await client.state(of: "counter").state, as: UTF8.self)
        #expect(state.contains(#""value":\#(applied)"#), "\(state)")
        #expect(!cluster.log("coordinator").contains("reason=rejoined"), "\(cluster.log("coordinator"))")
        await client.close()
        await cluster.stop()
    }

    @Test func aWorkerRestartedAfterACrashGetsItsIDBack() async throws {
        let cluster = try Cluster()
        // A 4 s liveness deadline, so that the restarted process surely says HELLO while the dead one's registration
        // stands, even on a loaded machine: it is told the id is busy first, then takes it back.
        try cluster.startCoordinator(["--heartbeat-ms", "1000"])
        try cluster.startWorker("w1", stores: ["counter=counter"])
        let client = try await cluster.client()
        try await cluster.waitUntilLive(1, client: client)
        #expect(try await client.dispatch("counter.add", json: #"{"by":1}"#).succeeded)

        // At once, well within the coordinator's deadline: its registration of the dead process is still live.
        kill(try #require(cluster.pid("w1")), SIGKILL)
        let restarted = try cluster.start("w1-restarted", [
            "worker", "--id", "w1", "--coordinator", cluster.control, "--store", "counter=counter",
        ])
        var result = try await client.dispatch("counter.add", json: #"{"by":1}"#, timeout: .seconds(10))
        for _ in 0..<100 where Self.applied(result) != 1 {
            try await Task.sleep(for: .milliseconds(100))
            result = try await client.dispatch("counter.add", json: #"{"by":1}"#, timeout: .seconds(10))
        }
        #expect(result.succeeded && Self.applied(result) == 1, "\(result.stores)\n\(cluster.allLogs())")
        #expect(restarted.isRunning, "\(cluster.log("w1-restarted"))")
        #expect(cluster.log("w1-restarted").contains("another process holds this worker id"), "\(cluster.log("w1-restarted"))")
        #expect(!cluster.log("w1-restarted").contains("refused"), "\(cluster.log("w1-restarted"))")
        let status = try await client.status()
        #expect(status.workers.map(\.id) == ["w1"] && status.workers.first?.state == .live, "\(status.workers)")
        await client.close()
        let statuses = await cluster.stop()
        #expect(statuses["w1-restarted"] == 0, "\(statuses)")
    }

    /// How many replicas of the counter store applied a dispatch.
    static func applied(_ result: DispatchResult) -> Int? {
        result.stores.first { $0.name == "counter" }?.applied
    }
}
