import ArgumentParser
import Foundation
import FluxBus
import FluxBusProtocol

struct DispatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dispatch",
        abstract: "Dispatch one action and print what every store did.",
        discussion: """
            The payload is JSON: an argument, @FILE to read it from a file, or - for standard input. Without one, \
            the payload is {}. Exits 0 when every store succeeded, 1 when one failed or was skipped.

            --batch reads one JSON payload per line from standard input and dispatches each as TYPE, in order, \
            several in flight at once; on a terminal it shows progress. It prints a summary (or, with --json, one \
            result object per line) and exits 1 if any dispatch had a store fail or skip.

            Examples:
              fluxbus dispatch counter.add '{"by":1}'
              fluxbus dispatch country-update '{"country":"Japan"}' --json
              fluxbus dispatch kv.set @entry.json --request-id import-42
              seq 1 1000 | sed 's/.*/{"by":1}/' | fluxbus dispatch counter.add --batch
            """)

    @Argument(help: "The action type, for example counter.add.")
    var type: String

    @Argument(help: ArgumentHelp("The JSON payload, @FILE, or - for standard input.", valueName: "json"))
    var payload: String = "{}"

    @Option(help: "An id that makes the request idempotent: a retry with the same id gets the original result.")
    var requestId: String?

    @Option(help: "An error the action carries, for stores that handle failures.")
    var error: String?

    @Flag(help: "Print one JSON object: seq, status, stores, elapsedMicros.")
    var json = false

    @Flag(help: "Read one JSON payload per line from standard input and dispatch each.")
    var batch = false

    @OptionGroup var connection: ConnectionOptions

    func validate() throws {
        guard !type.isEmpty else { throw ValidationError("the action type must not be empty") }
    }

    func run() async throws {
        if batch { return try await runBatch() }
        let bytes: [UInt8]
        do {
            bytes = try PayloadSource.read(payload)
        } catch {
            throw reportFailure(error)
        }
        let result = try await withClient(connection) { client in
            try await client.dispatch(type, payload: bytes, error: error, requestID: requestId ?? UUID().uuidString)
        }
        print(json ? try ResultView.encode(ResultView.json(result)) : ResultView.text(result, actionType: type))
        if !result.succeeded { throw ExitCode(1) }
    }
}

extension DispatchCommand {
    /// Requests kept in flight at once in a batch: enough to hide the round trip, far below the queue bound.
    static let batchWindow = 32

    func runBatch() async throws {
        guard payload == "{}" else {
            throw reportFailure(BusError(code: .usage, message: "--batch reads payloads from standard input; give no payload argument"))
        }
        var payloads: [[UInt8]] = []
        for (number, line) in readAllStandardInput().split(separator: "\n").enumerated() where !line.allSatisfy(\.isWhitespace) {
            do {
                payloads.append(try PayloadSource.validated(Data(line.utf8), origin: "line \(number + 1) of standard input"))
            } catch {
                throw reportFailure(error)
            }
        }
        let progress = Progress(total: payloads.count)
        let results = try await withClient(connection) { client in
            var results = [DispatchResult?](repeating: nil, count: payloads.count)
            try await withThrowingTaskGroup(of: (Int, DispatchResult).self) { group in
                var next = 0
                let (type, error, payloads) = (type, error, payloads)
                func launch() {
                    let index = next
                    let payload = payloads[index]
                    next += 1
                    group.addTask { (index, try await client.dispatch(type, payload: payload, error: error)) }
                }
                while next < min(Self.batchWindow, payloads.count) { launch() }
                while let (index, result) = try await group.next() {
                    results[index] = result
                    progress.advance()
                    if next < payloads.count { launch() }
                }
            }
            return results.compactMap { $0 }
        }
        progress.finish()
        let failed = results.filter { !$0.succeeded }
        if json {
            for result in results { print(try ResultView.encode(ResultView.json(result))) }
        } else {
            let sequences = results.map(\.sequence)
            print("\(results.count) dispatched as \(type)" + (sequences.isEmpty ? "" : ", #\(sequences.min()!) to #\(sequences.max()!)")
                + ", \(failed.count) with a store that failed or was skipped")
            for result in failed.prefix(10) { print(ResultView.text(result, actionType: type)) }
        }
        if !failed.isEmpty { throw ExitCode(1) }
    }

    private func readAllStandardInput() -> String {
        String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self)
    }
}

/// A progress line on standard error, shown only when it is a terminal.
final class Progress: @unchecked Sendable {
    // @unchecked: advanced only from the one task that collects results.
    private let total: Int
    private var done = 0
    private let visible = isatty(STDERR_FILENO) == 1
    private var lastShown = ContinuousClock.now

    init(total: Int) {
        self.total = total
    }

    func advance() {
        done += 1
        guard visible, total >= 100, ContinuousClock.now - lastShown > .milliseconds(100) || done == total else { return }
        lastShown = .now
        let width = 30
        let filled = total == 0 ? width : width * done / total
        FileHandle.standardError.write(Data("\r[\(String(repeating: "#", count: filled))\(String(repeating: " ", count: width - filled))] \(done)/\(total)".utf8))
    }

    func finish() {
        if visible, total >= 100 { FileHandle.standardError.write(Data("\n".utf8)) }
    }
}

/// Where a JSON payload comes from: the argument itself, `@FILE`, or `-` for standard input.
enum PayloadSource {
    static func read(_ argument: String) throws -> [UInt8] {
        let data: Data
        let origin: String
        if argument == "-" {
            data = FileHandle.standardInput.readDataToEndOfFile()
            origin = "standard input"
        } else if argument.hasPrefix("@") {
            let path = String(argument.dropFirst())
            guard let contents = FileManager.default.contents(atPath: path) else {
                throw BusError(code: .usage, message: "cannot read the payload file '\(path)'; check the path and its permissions")
            }
            data = contents
            origin = "file '\(path)'"
        } else {
            data = Data(argument.utf8)
            origin = "argument"
        }
        return try validated(data, origin: origin)
    }

    /// The payload's bytes, once checked to be JSON.
    static func validated(_ data: Data, origin: String) throws -> [UInt8] {
        do {
            _ = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        } catch {
            throw BusError(
                code: .usage,
                message: "the payload (\(origin)) is not valid JSON: \(String(decoding: data.prefix(80), as: UTF8.self)); "
                    + "quote it for the shell, for example '{\"by\":1}'")
        }
        return Array(data)
    }
}
