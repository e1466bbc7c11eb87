import Foundation
import FluxBus
import FluxBusProtocol
import FluxBusTools
import Testing

/// `fluxbus coordinator --lost-dependency skip|run` with real processes: country's only worker is SIGKILLed, and a
/// `country-update` then finds country lost. Under `skip` (the default) city is skipped; under `run` city runs
/// without country's output, which the city store answers by failing ("the country store published no country"),
/// so its status and message show that it ran. Either way country is lost, the outcome is unknown (exit 6), and the
/// bus goes on.
@Suite("A lost dependency, skipped or run without", .timeLimit(.minutes(1)))
struct LostDependencyTests {
    @Test(arguments: ["skip", "run"])
    func aStoreWaitingForALostStore(policy: String) async throws {
        let cluster = try Cluster()
        try cluster.startCoordinator(["--ack-timeout", "1", "--lost-dependency", policy])
        let cityJournal = cluster.directory.appendingPathComponent("city.journal")
        try cluster.startWorker("w-country", stores: ["country=country"])
        try cluster.startWorker("w-city", stores: ["city=city"], extra: ["--journal", cityJournal.path])
        let client = try await cluster.client()
        try await cluster.waitUntilLive(2, client: client)
        let before = try await client.dispatch("country-update", json: #"{"country":"Japan"}"#)
        #expect(before.succeeded)

        kill(try #require(cluster.pid("w-country")), SIGKILL)
        // Bounded: country's replica is written off after the ack timeout (1 s) or its liveness deadline (1 s).
        let lost = try await cluster.run("dispatch", [
            "dispatch", "country-update", #"{"country":"Spain"}"#, "--json", "--timeout", "6", "--coordinator", cluster.control,
        ])
        // Not "failed": country's replica may have applied it before it died, and a new one will replay it.
        #expect(lost.status == 6, "\(lost)")
        let result = try JSONDecoder().decode(ResultView.JSON.self, from: Data(lost.output.utf8))
        #expect(result.status == "unknown", "\(result)")
        #expect(result.stores["country"]?.status == "unknown", "country: \(String(describing: result.stores["country"]))")
        let city = try #require(result.stores["city"], "\(result)")
        if policy == "skip" {
            #expect(city.status == "skipped" && city.error == "waits for `country`, which was lost", "\(city)")
        } else {
            #expect(city.status == "failed" && city.error == "the country store published no country", "\(city)")
        }

        // The bus goes on: city alone takes a city-update, and its state is the one before the lost dispatch, moved
        // only by this update (city did not apply Spain under either policy).
        let next = try await client.dispatch("city-update", json: #"{"city":"Kyoto"}"#, timeout: .seconds(5))
        #expect(next.succeeded && next.sequence == result.seq + 1, "#\(next.sequence): \(next.stores)")
        let state = String(decoding: try await client.state(of: "city").state, as: UTF8.self)
        #expect(state == #"{"city":"Kyoto","country":"Japan"}"#, "\(state)")
        await client.close()
        await cluster.stop()
        let applied = try JournalEntry.read(cityJournal).first { $0.sequence == result.seq }
        #expect(applied?.status == (policy == "skip" ? "skipped" : "failed"), "city's journal for #\(result.seq): \(String(describing: applied))")
    }
}
