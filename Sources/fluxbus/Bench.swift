import ArgumentParser
import Foundation
import FluxBus

extension FluxBusCommand {
    struct Bench: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Measure FluxBus against a floor measured in the same run.",
            discussion: """
                Scenarios:
                  dispatcher  one Flux dispatch to 11 callbacks, one waiting for another, against the same 11 \
                closures called from an array (target: at most 1.5x)
                  redux       one Redux dispatch through 3 middlewares, a reducer and 10 subscribers, against \
                the same functions called directly

                Build in release mode for meaningful figures.

                Examples:
                  swift run -c release fluxbus bench
                  swift run -c release fluxbus bench dispatcher --json
                """
        )

        @Argument(help: "The scenario to run (dispatcher, redux); all when omitted.")
        var scenario: String?

        @Option(help: "Operations per round.")
        var operations = 1_000_000

        @Option(help: "Rounds; the median round is reported.")
        var rounds = 7

        @Flag(help: "Print one JSON array of results instead of a table.")
        var json = false

        func validate() throws {
            if let scenario, !InProcessBenchmarks.scenarios.contains(scenario) {
                throw ValidationError(
                    "unknown scenario '\(scenario)'; choose one of: \(InProcessBenchmarks.scenarios.joined(separator: ", "))"
                )
            }
            guard operations > 0, rounds > 0 else {
                throw ValidationError("--operations and --rounds must be positive")
            }
        }

        func run() throws {
            let settings = InProcessBenchmarks.Settings(operations: operations, rounds: rounds)
            var results: [BenchmarkResult] = []
            for name in scenario.map({ [$0] }) ?? InProcessBenchmarks.scenarios {
                if let result = try InProcessBenchmarks.run(name, settings: settings) { results.append(result) }
            }
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
                print(String(decoding: try encoder.encode(results), as: UTF8.self))
                return
            }
            print("scenario     per op      floor       ratio   target")
            for result in results {
                let target = result.targetRatio.map { String(format: "<= %.1fx %@", $0, result.meetsTarget! ? "met" : "MISSED") } ?? "-"
                print(
                    result.scenario.padding(toLength: 12, withPad: " ", startingAt: 0)
                        + String(format: " %7.1f ns  %7.1f ns  %5.2fx  ", result.nanosPerOperation,
                                 result.floorNanosPerOperation, result.ratio)
                        + target
                )
            }
            for result in results {
                print("  \(result.scenario): \(result.operation); floor: \(result.floor)")
            }
        }
    }
}
