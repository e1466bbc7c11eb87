import ArgumentParser
import FluxBus

@main
struct FluxBusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fluxbus",
        abstract: "Facebook's Flux dispatcher, distributed over ZeroMQ."
    )
}
