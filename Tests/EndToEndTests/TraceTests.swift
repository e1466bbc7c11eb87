import Foundation
import FluxBus
import FluxBusTools
import Testing

/// `fluxbus dispatch … --trace` across three worker processes, on the flight chain country → city → price: every step
/// of the waterfall is there, and the steps are ordered as the dispatch's causality demands (publish before country
/// starts, country's ACK before the RELEASE to city's worker, …). Durations are never checked, only their order.
@Suite("A traced dispatch's waterfall across three workers", .timeLimit(.minutes(1)))
struct TraceTests {
    @Test func theFlightChainsWaterfallAddsUp() async throws {
        let cluster = try Cluster()
        try cluster.startCoordinator()
        try cluster.startWorker("w-country", stores: ["country=country"])
        try cluster.startWorker("w-city", stores: ["city=city"])
        try cluster.startWorker("w-price", stores: ["price=price"])
        let client = try await cluster.client()
        try await cluster.waitUntilLive(3, client: client)
        await client.close()
        let parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
        let run = try await cluster.run("dispatch", [
            "dispatch", "country-update", #"{"country":"Japan"}"#, "--traceparent", parent, "--json",
            "--coordinator", cluster.control,
        ])
        #expect(run.status == 0, "\(run)")
        let result = try JSONDecoder().decode(ResultView.JSON.self, from: Data(run.output.utf8))
        #expect(result.traceparent == parent)
        let steps = try #require(result.trace, "no waterfall in \(run.output)")
        func step(_ process: String, _ name: String) throws -> WaterfallView.Step {
            try #require(steps.first { $0.process == process && $0.step == name }, "no `\(name)` on \(process) in \(steps)")
        }
        let received = try step("coordinator", "receive DISPATCH")
        let commit = try step("coordinator", "log commit")
        let publish = try step("coordinator", "publish ACTION #\(result.seq)")
        let country = try step("w-country", "run country")
        let countryAck = try step("coordinator", "receive ACK country from w-country")
        let toCity = try step("coordinator", "send RELEASE country → w-city")
        let city = try step("w-city", "run city")
        let cityAck = try step("coordinator", "receive ACK city from w-city")
        let toPrice = try step("coordinator", "send RELEASE city → w-price")
        let price = try step("w-price", "run price")
        let priceAck = try step("coordinator", "receive ACK price from w-price")
        let sent = try step("coordinator", "send RESULT")
        for worker in ["w-country", "w-city", "w-price"] { _ = try step("network", "ACTION → \(worker)") }
        _ = try step("network", "RELEASE → w-city (city ready)")
        _ = try step("network", "ACK price ← w-price")

        // `--sync always` (the default): the commit's fsync runs after the ACTION went out, while country runs, and the
        // coordinator reads country's ACK only once it is done.
        let sync = try step("coordinator", "log sync")
        #expect(publish.endMicros <= sync.startMicros && sync.endMicros <= countryAck.startMicros, "\(steps)")

        // Each step's end comes before the next step's start, along the whole critical path.
        let chain = [received, commit, publish, country, countryAck, toCity, city, cityAck, toPrice, price, priceAck, sent]
        for (earlier, later) in zip(chain, chain.dropFirst()) {
            #expect(earlier.endMicros <= later.startMicros, "`\(earlier.step)` ends after `\(later.step)` starts: \(steps)")
        }
        for step in steps {
            #expect(step.startMicros <= step.endMicros, "\(step)")
            #expect(step.endMicros <= sent.endMicros, "`\(step.step)` ends after the RESULT left: \(steps)")
        }
        // The lines come in order of their start, as a waterfall reads.
        #expect(steps.map(\.startMicros) == steps.map(\.startMicros).sorted())
        // Every network step fills exactly the gap between the two processes' steps it joins.
        let toCityNetwork = try step("network", "RELEASE → w-city (city ready)")
        #expect(toCityNetwork.startMicros == toCity.startMicros && toCityNetwork.endMicros <= city.startMicros)
        let backFromPrice = try step("network", "ACK price ← w-price")
        #expect(backFromPrice.startMicros >= price.endMicros && backFromPrice.endMicros == priceAck.startMicros)

        // The text form: one line per step, and the legend that says what is measured where.
        let text = try await cluster.run("dispatch-text", [
            "dispatch", "country-update", #"{"country":"France"}"#, "--trace", "--coordinator", cluster.control,
        ])
        #expect(text.status == 0, "\(text)")
        #expect(text.output.contains("trace 00-"), "\(text.output)")
        #expect(text.output.contains("run city") && text.output.contains("never subtracted"), "\(text.output)")
        #expect(text.output.split(separator: "\n").filter { $0.contains("|") }.count >= chain.count, "\(text.output)")

        // A retry of an untraced request is answered from the record: there is nothing to trace, and it says so.
        let plain = try await cluster.run("dispatch-plain", [
            "dispatch", "country-update", #"{"country":"Japan"}"#, "--request-id", "plain-1", "--coordinator", cluster.control,
        ])
        let retried = try await cluster.run("dispatch-retried", [
            "dispatch", "country-update", #"{"country":"Japan"}"#, "--request-id", "plain-1", "--trace", "--coordinator", cluster.control,
        ])
        #expect(plain.status == 0 && retried.status == 0, "\(plain)\n\(retried)")
        #expect(retried.error.contains("no waterfall") && !retried.output.contains("trace 00-"), "\(retried)")

        let bad = try await cluster.run("dispatch-bad", [
            "dispatch", "country-update", "--traceparent", "00-xyz-01", "--coordinator", cluster.control,
        ])
        #expect(bad.status == 2 && bad.error.contains("`00-xyz-01` is not a W3C traceparent"), "\(bad)")
        await cluster.stop()
    }
}
