import Foundation
import FluxBus
import FluxBusProtocol
import Testing

/// A dispatch that no store handles, or that a store handling it cannot run, is never reported ok: the CLI says so
/// and exits 1; a coordinator with --refuse-unhandled refuses it and logs nothing.
@Suite("Unhandled dispatches", .timeLimit(.minutes(1)))
struct UnhandledTests {
    @Test func anActionNoStoreHandlesIsReportedUnhandledAndExitsOne() async throws {
        let cluster = try Cluster()
        try cluster.startCoordinator(["--in-memory"])
        // `stats` handles counter.add but waits for `tdo`, a typo nobody hosts: it is not ready.
        _ = try cluster.startWorker("w1", stores: ["counter=counter", "stats=counter,after=tdo"])
        let client = try await cluster.client()
        defer { Task { await client.close() } }
        try await cluster.waitUntilLive(1, client: client)

        let typo = try CommandLineTests.fluxbus(["dispatch", "counter.ad", #"{"by":1}"#, "--coordinator", cluster.control])
        #expect(typo.status == 1, "\(typo.output) \(typo.error)")
        #expect(typo.output.contains("#1 counter.ad: unhandled"), "\(typo.output)")
        #expect(typo.error.contains("no store on the bus handles `counter.ad`"), "\(typo.error)")

        let json = try CommandLineTests.fluxbus(["dispatch", "counter.ad", "--json", "--coordinator", cluster.control])
        #expect(json.status == 1)
        let object = try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any]
        #expect(object?["status"] as? String == "unhandled")

        // counter runs it; stats cannot, and says why.
        let partly = try CommandLineTests.fluxbus(["dispatch", "counter.add", #"{"by":1}"#, "--coordinator", cluster.control])
        #expect(partly.status == 1, "\(partly.output)")
        #expect(partly.output.contains("counter   ok"), "\(partly.output)")
        #expect(partly.output.contains("stats     skipped -  not ready: it waits for `tdo`, which no worker hosts"), "\(partly.output)")

        // In a batch, each unhandled action is listed.
        let input = try BatchInputTests.write([#"{"x":1}"#, #"{"x":2}"#], in: cluster)
        let batch = try CommandLineTests.fluxbus(["dispatch", "nobody.handles", "--batch", "--coordinator", cluster.control], input: input)
        #expect(batch.status == 1, "\(batch.output) \(batch.error)")
        #expect(batch.output.contains("2 with a store that failed"), "\(batch.output)")
        #expect(batch.output.contains("(no store) skipped on -: no store on the bus handles action type `nobody.handles`"), "\(batch.output)")
        await cluster.stop()
    }

    @Test func aCoordinatorThatRefusesUnhandledLogsNothing() async throws {
        let cluster = try Cluster()
        try cluster.startCoordinator(["--in-memory", "--refuse-unhandled"])
        _ = try cluster.startWorker("w1", stores: ["counter=counter"])
        let client = try await cluster.client()
        defer { Task { await client.close() } }
        try await cluster.waitUntilLive(1, client: client)

        let refused = try CommandLineTests.fluxbus(["dispatch", "counter.ad", "--coordinator", cluster.control])
        #expect(refused.status == 4, "\(refused.error)")
        #expect(refused.error.contains("no store on the bus handles action type `counter.ad`"), "\(refused.error)")
        #expect(refused.error.contains("nothing was dispatched (this coordinator runs with --refuse-unhandled)"), "\(refused.error)")
        #expect(try await client.status().sequence == 0, "nothing was logged")

        let handled = try CommandLineTests.fluxbus(["dispatch", "counter.add", #"{"by":2}"#, "--coordinator", cluster.control])
        #expect(handled.status == 0, "\(handled.error)")
        #expect(try await client.status().sequence == 1)
        await cluster.stop()
    }
}
