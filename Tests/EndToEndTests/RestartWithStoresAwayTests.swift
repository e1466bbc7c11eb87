import Foundation
import FluxBus
import FluxBusProtocol
import Testing

/// A coordinator restarted while the only worker of a store is down, with that worker still away when the restart's
/// grace period ends: an action dispatched meanwhile names the store (outcome `unknown`, exit 6 from the CLI), and
/// the store applies it on its return. Before the log kept each store's declaration, the restarted coordinator did
/// not know the store until its worker came back, answered `unhandled`, and the store skipped the action for good
/// (an outside probe's repro-5). The simulator holds every plan to this (`SimChecker.plansRecorded`).
@Suite("A restart while a store's workers are away", .serialized, .timeLimit(.minutes(1)))
struct RestartWithStoresAwayTests {
    @Test func anActionDispatchedBeforeTheStoreReturnsIsAppliedWhenItDoes() async throws {
        let cluster = try Cluster()
        let checkpoints = cluster.directory.appendingPathComponent("w1-data").path
        let first = try cluster.start("coordinator-0", ["coordinator", "--control", cluster.control, "--publish", cluster.publish,
                                                        "--heartbeat-ms", "\(Cluster.heartbeatMilliseconds)"])
        let worker = try cluster.startWorker("w1", stores: ["counter=counter"], extra: ["--data-dir", checkpoints])
        let client = try await cluster.client(timeout: .seconds(20))
        try await cluster.waitUntilLive(1, client: client)
        #expect(try await client.dispatch("counter.add", json: #"{"by":1}"#, requestID: "a1").succeeded)

        for process in [first, worker] {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        try cluster.start("coordinator-1", ["coordinator", "--control", cluster.control, "--publish", cluster.publish,
                                            "--heartbeat-ms", "\(Cluster.heartbeatMilliseconds)", "--recovery-grace-seconds", "1"])
        // Waits out the grace period, then goes out with the counter's worker still away.
        let meanwhile = try await client.dispatch("counter.add", json: #"{"by":1}"#, requestID: "a2")
        #expect(!meanwhile.isUnhandled, "the store of the previous run is in the plan: \(meanwhile.outcomes)")
        #expect(meanwhile.stores.map(\.name) == ["counter"])
        #expect(meanwhile.isUnknown, "its outcome is not known until its worker returns: \(meanwhile.outcomes)")

        try cluster.start("w1-again", ["worker", "--id", "w1", "--coordinator", cluster.control, "--store", "counter=counter",
                                       "--data-dir", checkpoints])
        try await cluster.waitUntilLive(1, client: client)
        let retried = try await client.dispatch("counter.add", json: #"{"by":1}"#, requestID: "a2")
        #expect(retried.sequence == meanwhile.sequence)
        #expect(retried.succeeded, "the returning replica applied it and reported its outcome: \(retried.outcomes)")
        let state = try await client.state(of: "counter")
        #expect(String(decoding: state.state, as: UTF8.self) == #"{"value":2}"#, "\(cluster.allLogs())")
        _ = await cluster.stop()
    }
}
