import ArgumentParser
import Foundation
import FluxBus
import FluxBusProtocol
import FluxBusTools

struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show the bus at a glance: rates, latency, workers with their state and lag, stores with their replicas.",
        discussion: """
            The second line holds the figures to check first, as `fluxbus top` shows them live: requests and \
            actions per second over the coordinator's last ten seconds or so, latency percentiles over its latest \
            1,024 actions, and the live or catching-up worker furthest behind, with its lag.

            A worker is live (counted in every dispatch), catching-up (joining, replaying what it missed), lost \
            (silent past its deadline) or gone (said goodbye). Replicas of one store that report different digests \
            for the same sequence are flagged DIVERGED.

            --wait-ready N blocks until N workers are live and caught up (lag 0), then prints the status; it \
            exits 3 if that does not happen within --timeout. Scripts and service managers use it to wait for a \
            cluster.

            Examples:
              fluxbus status
              fluxbus status --json | jq '.workers[] | select(.state != "live")'
              fluxbus status --wait-ready 3 --timeout 30
            """)

    @Flag(help: "Print one JSON object: epoch, seq, queue, workers, stores.")
    var json = false

    @Option(help: ArgumentHelp("Wait until this many workers are live and caught up.", valueName: "n"))
    var waitReady: Int?

    @OptionGroup var connection: ConnectionOptions

    func validate() throws {
        if let waitReady, waitReady < 1 { throw ValidationError("--wait-ready needs a positive number of workers") }
    }

    func run() async throws {
        let status = try await withClient(connection) { client in
            guard let waitReady else { return try await client.status() }
            let deadline = ContinuousClock.now.advanced(by: .milliseconds(Int64(connection.timeout * 1000)))
            while true {
                let status = try await client.status()
                if status.readyWorkers >= waitReady { return status }
                guard ContinuousClock.now < deadline else {
                    throw BusError(code: .unreachable, message:
                        "only \(status.readyWorkers) of \(waitReady) workers are live and caught up after \(connection.timeout) s; "
                        + "`fluxbus status` shows the others' state")
                }
                try await Task.sleep(for: .milliseconds(100))
            }
        }
        print(json ? try ResultView.encode(StatusView.json(status)) : StatusView.text(status))
    }
}

struct GraphCommand: AsyncParsableCommand {
    enum Format: String, ExpressibleByArgument, CaseIterable { case text, dot, json }

    static let configuration = CommandConfiguration(
        commandName: "graph",
        abstract: "Print the waitFor graph of the stores on the bus.",
        discussion: """
            Examples:
              fluxbus graph
              fluxbus graph --format dot | dot -Tpng > graph.png
              fluxbus graph --format json
            """)

    @Option(help: "text, dot (Graphviz) or json.")
    var format = Format.text

    @OptionGroup var connection: ConnectionOptions

    func run() async throws {
        let graph = try await withClient(connection) { try await $0.graph() }
        switch format {
        case .text: print(GraphView.text(graph))
        case .dot: print(GraphView.dot(graph))
        case .json: print(try ResultView.encode(GraphView.json(graph)))
        }
    }
}

struct StateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "state",
        abstract: "Print the JSON state of one live replica of a store.",
        discussion: """
            Standard error names the replica, the sequence its state reflects, and its digest. A state of any size
            works: one larger than a message streams in chunks, and is checked against its size and checksum before it
            is printed. --timeout bounds the wait for the first answer, which includes the replica encoding the whole
            state (seconds for hundreds of megabytes: raise it for such a store), and then each chunk; the
            coordinator waits up to its --state-timeout (120 s by default) for that first answer.

            Examples:
              fluxbus state counter
              fluxbus state price | jq .price
            """)

    @Argument(help: "The store's name.")
    var store: String

    @OptionGroup var connection: ConnectionOptions

    func run() async throws {
        let state = try await withClient(connection) { try await $0.state(of: store) }
        printError("\(state.store) on \(state.worker) at #\(state.sequence), digest \(StateDigest.hex(state.digest))")
        print(String(decoding: state.state, as: UTF8.self))
    }
}
