import Foundation
import FluxBus
import FluxBusProtocol
import FluxBusTools
import Testing

/// Issue 14, "outcomes that lie", item 3: a request id used again with another action or payload is refused with
/// ERROR 9 naming the id and the original action type, whether the first request completed, is in flight, or is
/// queued; the exact retry still gets the original result. From real processes and the CLI.
@Suite("A reused request id", .serialized, .timeLimit(.minutes(1)))
struct RequestIDReuseTests {
    static func expectReused(_ error: any Error, id: String, original: String) {
        let busError = error as? BusError
        #expect(busError?.remoteCode == .requestIDReused, "\(error)")
        #expect(busError?.code == .refused, "\(error)")
        #expect(busError?.message.contains("request id `\(id)`") == true, "\(error)")
        #expect(busError?.message.contains("`\(original)`") == true, "\(error)")
    }

    @Test func aReusedIDWithOtherActionsIsRefusedAndTheExactRetryIsAnswered() async throws {
        let cluster = try Cluster()
        try cluster.startCoordinator(["--ack-timeout", "30"])
        let worker = try cluster.startWorker("w1", stores: ["counter=counter", "kv=kv"])
        let client = try await cluster.client()
        try await cluster.waitUntilLive(1, client: client)
        let first = try await client.dispatch("counter.add", json: #"{"by":1}"#, requestID: "r-1")
        #expect(first.succeeded && first.sequence == 1)

        // Completed: another action type, and the same type with another payload, are refused at the CLI (exit 4).
        for (type, json) in [("kv.set", #"{"key":"a","value":1}"#), ("counter.add", #"{"by":2}"#)] {
            let exit = try await cluster.run("reuse-\(type)", ["dispatch", type, json, "--request-id", "r-1", "--coordinator", cluster.control])
            #expect(exit.status == 4, "\(exit)")
            for part in ["request id `r-1`", "`counter.add`", "new id"] { #expect(exit.error.contains(part), "\(part): \(exit)") }
            #expect(!exit.output.contains("ok"), "\(exit)")
        }
        let retry = try await cluster.run("retry", ["dispatch", "counter.add", #"{"by":1}"#, "--request-id", "r-1", "--json", "--coordinator", cluster.control])
        #expect(retry.status == 0, "\(retry)")
        #expect(try JSONDecoder().decode(ResultView.JSON.self, from: Data(retry.output.utf8)).seq == 1, "\(retry)")

        // In flight (its only replica stopped) and queued behind it.
        kill(worker.processIdentifier, SIGSTOP)
        let inFlight = Task { try await client.dispatch("counter.add", json: #"{"by":3}"#, requestID: "r-2") }
        let other = try await cluster.client()
        try await Self.waitUntilLogged(2, client: other)
        let queued = Task { try await other.dispatch("counter.add", json: #"{"by":4}"#, requestID: "r-3") }
        let third = try await cluster.client()
        try await Self.waitUntilLogged(3, client: third)
        do {
            _ = try await third.dispatch("counter.add", json: #"{"by":30}"#, requestID: "r-2")
            Issue.record("a reuse of the id in flight was dispatched")
        } catch { Self.expectReused(error, id: "r-2", original: "counter.add") }
        do {
            let twice = BatchAction(actionType: "counter.add", payload: Array(#"{"by":4}"#.utf8))
            _ = try await third.dispatchBatch([twice, twice], requestID: "r-3")
            Issue.record("a reuse of the queued id as a batch was dispatched")
        } catch { Self.expectReused(error, id: "r-3", original: "counter.add") }
        kill(worker.processIdentifier, SIGCONT)
        #expect(try await inFlight.value.sequence == 2)
        #expect(try await queued.value.sequence == 3)
        let state = try await third.state(of: "counter")
        #expect(String(decoding: state.state, as: UTF8.self) == #"{"value":8}"#, "\(cluster.allLogs())")
        #expect(try await third.status().logLast == 3, "a refused reuse was logged")
        for client in [client, other, third] { await client.close() }
        await cluster.stop()
    }

    /// Polls until the coordinator has logged `sequence`: the request is accepted (in flight or queued).
    static func waitUntilLogged(_ sequence: UInt64, client: BusClient) async throws {
        let deadline = ContinuousClock.now.advanced(by: .seconds(10))
        while ContinuousClock.now < deadline {
            if let status = try? await client.status(timeout: .seconds(1)), status.logLast >= sequence { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw ClusterError("the coordinator did not log #\(sequence)")
    }
}
