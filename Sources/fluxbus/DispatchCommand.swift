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

            Examples:
              fluxbus dispatch counter.add '{"by":1}'
              fluxbus dispatch country-update '{"country":"Japan"}' --json
              fluxbus dispatch kv.set @entry.json --request-id import-42
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

    @OptionGroup var connection: ConnectionOptions

    func validate() throws {
        guard !type.isEmpty else { throw ValidationError("the action type must not be empty") }
    }

    func run() async throws {
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
