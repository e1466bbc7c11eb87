import Flux
import FluxBusTools
import Testing

@testable import FluxBus

@Suite("In-process demo and benchmarks")
struct InProcessTests {
    @Test func theFlightDemoShowsEveryStoreAfterEveryAction() throws {
        var lines: [String] = []
        let reports = try FlightDemo.runInProcess { lines.append($0) }
        #expect(reports.count == FlightDemo.script.count)
        #expect(reports.map(\.succeeded) == [true, true, true, false, true])
        #expect(lines.contains("    city failed (no default city for country `Atlantis`)"))
        #expect(lines.contains("    price skipped (waits for `city`, which failed)"))
        #expect(lines.contains(#"    city     {"city":"Osaka","country":"Japan"}"#))
        #expect(lines.suffix(3) == [
            "    layer 0: country", "    layer 1: city waits for country", "    layer 2: price waits for city",
        ])
    }

    /// A smoke run: the scenarios run and report sane figures. Speed itself is measured by `fluxbus bench`.
    @Test(arguments: InProcessBenchmarks.scenarios)
    func benchmarkScenariosRun(scenario: String) throws {
        let result = try #require(try InProcessBenchmarks.run(scenario, settings: .init(operations: 200, rounds: 3)))
        #expect(result.scenario == scenario)
        #expect(result.nanosPerOperation > 0)
        #expect(result.floorNanosPerOperation > 0)
        #expect(result.rounds == 3)
        #expect(try InProcessBenchmarks.run("no-such-scenario") == nil)
    }
}
