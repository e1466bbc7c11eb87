import ArgumentParser
import Foundation
import FluxBus
import FluxBusProtocol
import FluxBusTools

struct WatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Print a store's state, then its state again each time it changes.",
        discussion: """
            Prints the state of one live replica of STORE with the sequence it is at, as `fluxbus state` does, then \
            a new line whenever a dispatch the store ran completes: it reads the state again and prints it with the \
            sequence that state is actually at.

            What it guarantees: every line is the whole state of a live replica at the sequence it shows, and those \
            sequences only grow. After a change to the store completes, a line at or after its sequence follows. \
            Changes that land close together may share one line (the state read after the first already holds the \
            next): a line is not one per action. To see every action, use `fluxbus tail`; to follow each change one \
            by one in a program, use BusClient's watch(_:named:) with the store's type (docs/GUIDE.md, "Watching \
            state").

            Ends after --count lines, or with Ctrl-C. Exits 4 when no live replica hosts STORE, 3 when the \
            coordinator does not answer.

            Examples:
              fluxbus watch counter
              fluxbus watch kv --json | jq -c '.state'
              fluxbus watch price --count 1
            """)

    @Argument(help: "The store's name.")
    var store: String

    @Option(help: "Stop after printing this many states (the first one included).")
    var count: Int?

    @Flag(help: "Print one JSON object per line: seq, store, worker, digest, state.")
    var json = false

    @OptionGroup var connection: ConnectionOptions

    func validate() throws {
        if let count, count < 1 { throw ValidationError("--count needs a positive number of lines") }
    }

    func run() async throws {
        try await withClient(connection) { client in
            // Subscribed first: a change completed after the first state is read is announced.
            let live = try await client.publications(buffer: 1_024)
            var printed = 0
            var last = try await client.state(of: store)
            /// Prints a state; returns whether the count was reached.
            func show(_ state: Message.State) throws -> Bool {
                // Written straight through, not buffered: a pipe reader sees each state as it comes.
                FileHandle.standardOutput.write(Data(((json ? try WatchView.json(state) : WatchView.text(state)) + "\n").utf8))
                printed += 1
                return count.map { printed >= $0 } ?? false
            }
            if try show(last) { return }
            for try await message in live {
                switch message {
                case .completed(let completed):
                    // Only a dispatch this store ran can change it; one that ran but failed may have changed it too.
                    guard completed.sequence > last.sequence,
                          completed.outcomes.contains(where: { $0.store == store && ($0.status == .ok || $0.status == .failed) })
                    else { continue }
                    let state = try await client.state(of: store)
                    guard state.sequence > last.sequence else { continue }
                    last = state
                    if try show(state) { return }
                case .heartbeat(let heartbeat):
                    // An idle bus past the last line: a change announced before the subscription took hold shows
                    // here as a new digest.
                    guard heartbeat.sequence > last.sequence else { continue }
                    let state = try await client.state(of: store)
                    guard state.sequence > last.sequence else { continue }
                    let changed = state.digest != last.digest
                    last = state
                    if changed, try show(state) { return }
                default:
                    continue
                }
            }
        }
    }
}
