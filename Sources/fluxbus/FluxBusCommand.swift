import ArgumentParser
import FluxBus

@main
struct FluxBusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fluxbus",
        abstract: "Facebook's Flux dispatcher, faithful in process and distributed over ZeroMQ.",
        discussion: """
            Exit codes:
              0  done
              1  the dispatch completed, but a store failed or was skipped
              2  usage
              3  unreachable or timed out
              4  refused (busy, unauthorized, invalid graph)
            """,
        subcommands: [Demo.self, Bench.self]
    )
}
