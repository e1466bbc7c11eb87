import Foundation
import FluxBus
import Testing

/// One join per restart: while the coordinator is down, a worker says HELLO again every liveness deadline, and the
/// HELLOs queue up on its connection. Before, the restarted coordinator took each as a new join (the report saw
/// three within a second), writing the worker off and starting its catch-up over each time.
@Suite("A worker joins a restarted coordinator once", .timeLimit(.minutes(1)))
struct JoinOnceTests {
    @Test func queuedHellosMakeOneJoin() async throws {
        let cluster = try Cluster()
        let data = cluster.directory.appendingPathComponent("data").path
        try cluster.start("coordinator-1", [
            "coordinator", "--control", cluster.control, "--publish", cluster.publish, "--data-dir", data,
            "--heartbeat-ms", "\(Cluster.heartbeatMilliseconds)",
        ])
        try cluster.startWorker("w1", stores: ["counter=counter"])
        try cluster.startWorker("w2", stores: ["counter=counter"])
        let client = try await cluster.client()
        try await cluster.waitUntilLive(2, client: client)
        _ = try await client.dispatch("counter.add", json: #"{"by":1}"#)

        kill(try #require(cluster.pid("coordinator-1")), SIGKILL)
        // Three liveness deadlines: each worker says HELLO about three times meanwhile.
        try await Task.sleep(for: .seconds(3))
        try cluster.start("coordinator-2", [
            "coordinator", "--control", cluster.control, "--publish", cluster.publish, "--data-dir", data,
            "--heartbeat-ms", "\(Cluster.heartbeatMilliseconds)",
        ])
        try await cluster.waitUntilLive(2, client: client)
        let after = try await client.dispatch("counter.add", json: #"{"by":1}"#, timeout: .seconds(5))
        #expect(after.succeeded, "\(after.stores)")
        // Settle: any HELLO still queued has arrived by now.
        try await Task.sleep(for: .seconds(1))
        let log = cluster.log("coordinator-2")
        for worker in ["w1", "w2"] {
            let joins = log.split(separator: "\n").filter { $0.contains("worker joined") && $0.contains("worker=\(worker)") }
            #expect(joins.count == 1, "\(worker) joined \(joins.count) times:\n\(log)")
            #expect(!log.contains("reason=rejoined"), "\(log)")
        }
        await client.close()
        await cluster.stop()
    }
}
