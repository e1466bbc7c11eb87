import ArgumentParser
import Foundation
import FluxBus
import FluxBusProtocol
import FluxBusTools

struct TopCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "top",
        abstract: "Watch the bus live: throughput, latency, queue, and every worker's state, lag and digests.",
        discussion: """
            On a terminal it redraws one screen in place (the alternate screen, as htop does) every --interval \
            seconds, and quits on q, Ctrl-C or SIGTERM, putting the terminal back as it was. When standard output \
            is not a terminal it prints one line per refresh instead, for logs and scripts; with --count it exits \
            3 when the last refresh could not reach the coordinator.

            Rates are the coordinator's over its last ten seconds or so; latency percentiles are over its latest \
            1,024 completed actions (from publication to completion). A worker's DIGESTS column says DIFFER with \
            the stores whose replica on it disagrees with another replica at the same sequence.

            Examples:
              fluxbus top
              fluxbus top --interval 5 --count 3 > top.log
            """)

    @Option(help: ArgumentHelp("Seconds between refreshes.", valueName: "seconds"))
    var interval: Double = 1

    @Option(help: ArgumentHelp("Stop after this many refreshes (default: until q or a signal).", valueName: "n"))
    var count: Int?

    @OptionGroup var connection: ConnectionOptions

    func validate() throws {
        guard interval >= 0.1, interval <= 3600 else {
            throw ValidationError("--interval must be from 0.1 to 3600 seconds, not \(interval)")
        }
        if let count, count < 1 { throw ValidationError("--count needs a positive number of refreshes, not \(count)") }
    }

    func run() async throws {
        let stop = SignalFlag()
        try await withClient(connection) { client in
            if TerminalScreen.isTerminal {
                try await refreshScreen(client, until: stop)
            } else {
                try await printLines(client, until: stop)
            }
        }
    }

    /// How long one STATUS may take: the interval, at least a second, at most --timeout.
    private var statusTimeout: Duration { .milliseconds(Int64(min(connection.timeout, max(interval, 1)) * 1000)) }

    /// The wait between refreshes, in 100 ms slices, so that q and signals are noticed at once.
    private var slices: Int { max(1, Int((interval * 10).rounded())) }

    private func refreshScreen(_ client: BusClient, until stop: SignalFlag) async throws {
        let screen = TerminalScreen()
        defer { screen.restore() }
        let endpoint = connection.resolvedEndpoint
        var refreshes = 0
        while !stop.isRaised {
            do {
                let status = try await client.status(timeout: statusTimeout)
                screen.draw(TopView.screen(status, coordinator: endpoint, at: Date(), width: screen.width))
            } catch {
                screen.draw(["fluxbus top   \(endpoint)", "", "cannot get the status: \(error)", "trying again; q quits"])
            }
            refreshes += 1
            if let count, refreshes >= count { return }
            for _ in 0..<slices where !stop.isRaised {
                if screen.quitPressed(within: 100) { return }
            }
        }
    }

    private func printLines(_ client: BusClient, until stop: SignalFlag) async throws {
        var refreshes = 0
        while !stop.isRaised {
            // Written at once, not buffered: a pipe reader sees each refresh as it happens.
            let line: String
            var failure: (any Error)?
            do {
                line = TopView.line(try await client.status(timeout: statusTimeout), at: Date())
            } catch {
                line = "cannot get the status from \(connection.resolvedEndpoint): \(error)"
                failure = error
            }
            FileHandle.standardOutput.write(Data((line + "\n").utf8))
            refreshes += 1
            if let count, refreshes >= count {
                // A script that asked for N refreshes learns whether the last one reached the coordinator (exit 3).
                if let failure { throw failure }
                return
            }
            for _ in 0..<slices where !stop.isRaised { try await Task.sleep(for: .milliseconds(100)) }
        }
    }
}
