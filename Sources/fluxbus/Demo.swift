import ArgumentParser
import FluxBus

extension FluxBusCommand {
    struct Demo: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run the flight example: country, city and price stores, with city waiting for country "
                + "and price waiting for city.",
            discussion: """
                Dispatches the seeds' actions and prints, for each one, what every store did and every store's \
                state after it, then the dependency graph. One action names a country with no default city: \
                the city store fails and the price store is skipped, and the next action is clean.

                Example:
                  fluxbus demo
                """
        )

        func run() throws {
            try FlightDemo.runInProcess { print($0) }
        }
    }
}
