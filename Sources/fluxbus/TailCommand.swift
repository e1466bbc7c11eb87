import ArgumentParser
import Foundation
import FluxBus
import FluxBusProtocol
import FluxBusTools

struct TailCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tail",
        abstract: "Stream dispatches and what every store did, as they complete.",
        discussion: """
            Subscribes to the coordinator's action stream (its publish endpoint, from status) and prints one line \
            per completed dispatch. With --from, first prints the coordinator's history from that sequence.

            Examples:
              fluxbus tail
              fluxbus tail --from 1 --json | jq 'select(.stores.price == "skipped")'
              fluxbus tail --count 10
            """)

    @Option(help: "Print history from this sequence first.")
    var from: UInt64?

    @Option(help: "Stop after this many dispatches.")
    var count: Int?

    @Flag(help: "Print one JSON object per line: seq, epoch, action, stores, errors, elapsedMicros.")
    var json = false

    @OptionGroup var connection: ConnectionOptions

    func run() async throws {
        try await withClient(connection) { client in
            let live = try await client.completions()
            var printed = 0
            var last: UInt64 = 0
            func show(_ view: TailView.JSON) throws -> Bool {
                // Written straight through, not buffered: a pipe reader sees each dispatch as it completes.
                FileHandle.standardOutput.write(Data(((json ? try ResultView.encode(view) : TailView.text(view)) + "\n").utf8))
                last = view.seq
                printed += 1
                return count.map { printed >= $0 } ?? false
            }
            /// Prints history from `start` up to `end`, batch by batch; returns whether the count was reached.
            func showHistory(from start: UInt64, to end: UInt64 = .max) async throws -> Bool {
                var cursor = start
                while cursor <= end {
                    let (entries, poisoned) = try await client.historyPage(from: cursor, to: end)
                    guard let lastEntry = entries.last else { break }
                    for entry in entries where entry.sequence > last {
                        if try show(TailView.json(entry, poisoned: poisoned)) { return true }
                    }
                    cursor = lastEntry.sequence + 1
                }
                return false
            }
            if let from, try await showHistory(from: max(from, 1)) { return }
            for try await completed in live {
                if completed.sequence <= last { continue }
                // A completion published before the subscription took hold: fill the gap from history.
                if last > 0, completed.sequence > last + 1, try await showHistory(from: last + 1, to: completed.sequence - 1) { return }
                if try show(TailView.json(completed)) { return }
            }
        }
    }
}
