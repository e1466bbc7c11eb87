import Foundation
import FluxBus
import FluxBusProtocol
import Testing

/// One join per restart: while the coordinator is down, a worker says HELLO again every liveness deadline. Before, the
/// HELLOs queued up on its connection and the restarted coordinator took each as a new join (the report saw three
/// within a second), writing the worker off and starting its catch-up over each time; then it kept the worker's
/// standing but still WELCOMEd each. Now the worker queues one HELLO while its connection is down.
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
            // And the worker queued one HELLO through the outage, not one per second: one WELCOME per coordinator.
            let welcomes = cluster.log(worker).components(separatedBy: "welcomed, catching up").count - 1
            #expect(welcomes == 2, "\(worker) was welcomed \(welcomes) times:\n\(cluster.log(worker))")
        }
        await client.close()
        await cluster.stop()
    }
}

/// A replica that caught up by replaying reported no digest (`0000000000000000` in `status`) until the store's next
/// dispatch, so a divergence could not be seen meanwhile. It reports its digests when it goes live.
@Suite("A replica reports its digest when it goes live", .timeLimit(.minutes(1)))
struct DigestOnLiveTests {
    @Test func aLateReplicaShowsItsDigestAtOnce() async throws {
        let cluster = try Cluster()
        try cluster.startCoordinator()
        try cluster.startWorker("w1", stores: ["counter=counter"])
        let client = try await cluster.client()
        try await cluster.waitUntilLive(1, client: client)
        for _ in 1...20 { _ = try await client.dispatch("counter.add", json: #"{"by":2}"#) }

        try cluster.startWorker("late", stores: ["counter=counter"])
        try await cluster.waitUntilLive(2, client: client)
        // Going live and reporting are one step on the worker, but the report may land just after READY.
        var replicas: [Replica] = []
        for _ in 0..<40 {
            replicas = try #require(try await client.status().stores.first { $0.name == "counter" }).replicas
            if replicas.allSatisfy({ $0.digest != 0 }) { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        let late = try #require(replicas.first { $0.worker == "late" }, "\(replicas)")
        let first = try #require(replicas.first { $0.worker == "w1" }, "\(replicas)")
        #expect(late.digest != 0, "\(replicas)")
        #expect(late.digest == first.digest && late.lastApplied == first.lastApplied, "\(replicas)")
        #expect(try await client.status().stores.first { $0.name == "counter" }?.divergedAt == 0)
        await client.close()
        await cluster.stop()
    }
}
