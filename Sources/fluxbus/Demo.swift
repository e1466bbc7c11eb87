import ArgumentParser
import Foundation
import FluxBus
import FluxBusTools

extension FluxBusCommand {
    struct Demo: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run the flight example on a coordinator and three worker processes, then stop them.",
            discussion: """
                Starts a coordinator and three workers from this binary, one per store: the city store waits for \
                the country store, and the price store waits for the city store, so both waits cross processes. \
                For each of the seeds' actions it prints what every store did and every store's state, then the \
                graph, then stops every process with SIGTERM. One action names a country with no default city: \
                the city store fails, the price store is skipped, and the next action is clean.

                --in-process runs the same example under an in-process Hub instead.

                Examples:
                  fluxbus demo
                  fluxbus demo --in-process
                """
        )

        @Flag(help: "Run the example in this process, under a Hub, without the bus.")
        var inProcess = false

        func run() async throws {
            if inProcess {
                try FlightDemo.runInProcess { print($0) }
                return
            }
            let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
            do {
                let clean = try await DistributedDemo.run(executable: executable) { print($0) }
                if !clean { throw ExitCode(1) }
            } catch let code as ExitCode {
                throw code
            } catch {
                throw reportFailure(error)
            }
        }
    }
}
