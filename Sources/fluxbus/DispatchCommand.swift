import ArgumentParser
import Foundation
import FluxBus
import FluxStores
import FluxBusProtocol
import FluxBusTools

struct DispatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dispatch",
        abstract: "Dispatch one action and print what every store did.",
        discussion: """
            The payload is JSON: an argument, @FILE to read it from a file, or - for standard input. Without one, \
            the payload is {}. A payload that gives a key twice in one object is refused (exit 2): a store would \
            read only its first value. Exits 0 when every store succeeded; 1 when one failed or was skipped (a store that \
            handles the type but waits for a store no worker hosts is skipped, "not ready"), or when no store \
            handles the type at all (unhandled: it is logged; no store on the bus applies it, and a store that \
            joins the bus later and handles the type builds its state from it); and 6 when \
            a store's outcome is unknown: its replicas did not answer in time. The action is in the log and they \
            apply it when they return, so do not send it again under a new id; send it again with the same \
            --request-id to see the outcome once a replica has reported it.

            --batch reads one JSON payload per line (LF or CR LF; blank lines skipped) from standard input and \
            dispatches them as TYPE, in order, in \
            batches of --batch-size: each batch is one request whose actions run one by one, exactly as if \
            dispatched singly, and is answered once. On a terminal it shows progress. It prints a summary (or, with \
            --json, one object per batch) and exits 1 if any action had a store fail or skip or no store handled it, 6 if \
            any action's outcome is \
            unknown. The whole input is \
            checked before the first batch is sent: a line that is not JSON (or gives a key twice), or over --max-payload-bytes, or a batch \
            over the 16 MiB message limit, sends nothing and exits 2. If a batch fails part-way (refused: exit 4; no \
            answer, or the coordinator stopped: exit 3), it prints which input lines were applied and under which \
            sequences, whether the failed batch was applied (refused: no; otherwise unknown), and which lines were \
            not sent (with --json, one object: appliedLines, failed, notSentLines).

            --trace prints where the time went after the result: a waterfall with one line per step, in µs from \
            the coordinator's receipt of the request: the coordinator receiving it, committing it to its log \
            (write and fsync) and publishing the ACTION; each store running on its worker; each ACK and RELEASE \
            between them; and the RESULT leaving. Each process measures on its own clock (a worker from its receipt \
            of the ACTION), the coordinator places the workers' steps between its own sends and receipts, and \
            `network` is the time left over. --traceparent joins a trace of your own (W3C, for example from your \
            tracing library's span) instead of starting a new one; with --json both go under `traceparent` and \
            `trace`. An untraced dispatch measures nothing. Single dispatches only, not --batch.

            Examples:
              fluxbus dispatch counter.add '{"by":1}'
              fluxbus dispatch country-update '{"country":"Japan"}' --trace
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

    @Flag(help: "Print one JSON object: seq, status, stores, elapsedMicros (and traceparent and trace with --trace).")
    var json = false

    @Flag(help: "Trace the dispatch under a new trace id and print its waterfall: where the time went, step by step.")
    var trace = false

    @Option(help: ArgumentHelp(
        "Trace the dispatch as part of this W3C trace (implies --trace).",
        valueName: "00-<32 hex trace id>-<16 hex span id>-<2 hex flags>"))
    var traceparent: String?

    @Flag(help: "Read one JSON payload per line from standard input and dispatch them in batches.")
    var batch = false

    @Option(help: "Actions per batch with --batch; at most the coordinator's --max-batch (4096).")
    var batchSize = 1_000

    @Option(help: "With --batch: the largest payload of one line, in bytes: the coordinator's --max-payload-bytes (1 MiB by default), at most 8 MiB. A longer line stops the input before anything is sent.")
    var maxPayloadBytes = 1 << 20

    @OptionGroup var connection: ConnectionOptions

    func validate() throws {
        guard !type.isEmpty else { throw ValidationError("the action type must not be empty") }
        // An empty id would make every retry under it a new request, each applied again.
        guard requestId?.isEmpty != true else {
            throw ValidationError("--request-id must not be empty; give the id to repeat on a retry, or leave the option out for a new one")
        }
        guard batchSize >= 1 else { throw ValidationError("--batch-size must be at least 1") }
        if let traceparent {
            do { _ = try TraceContext(parsing: traceparent) } catch { throw ValidationError("--traceparent: \(error)") }
        }
        guard !(batch && (trace || traceparent != nil)) else {
            throw ValidationError("--trace traces one dispatch; it does not combine with --batch")
        }
        guard (1...Limits.default.maxBytesField).contains(maxPayloadBytes) else {
            throw ValidationError("--max-payload-bytes must be 1 to \(Limits.default.maxBytesField) (8 MiB, FluxBus's limit), not \(maxPayloadBytes)")
        }
    }

    func run() async throws {
        if batch { return try await runBatch() }
        let bytes: [UInt8]
        do {
            bytes = try PayloadSource.read(payload)
        } catch {
            throw reportFailure(error)
        }
        let requestID = requestId ?? UUID().uuidString
        let context = try traceparent.map { try TraceContext(parsing: $0) } ?? (trace ? TraceContext.random() : nil)
        let result = try await withClient(connection) { client in
            do {
                if let context {
                    return try await client.dispatch(type, payload: bytes, error: error, requestID: requestID, trace: context)
                }
                return try await client.dispatch(type, payload: bytes, error: error, requestID: requestID)
            } catch let failure as BusError where failure.code == .unreachable {
                // No answer says nothing of the outcome: sent again under a new id, an applied action would run twice.
                throw BusError(code: .unreachable, message: failure.message + " The outcome is unknown: the action may have "
                    + "been applied. Send it again with --request-id \(requestID) to get its result; it is applied at most once")
            }
        }
        if json {
            var view = ResultView.json(result)
            view.traceparent = context?.description
            print(try ResultView.encode(view))
        } else {
            print(ResultView.text(result, actionType: type))
            if context != nil, result.trace.isEmpty {
                printError("fluxbus: no waterfall: the coordinator answered request id \(requestID) from its record of an "
                    + "earlier, untraced run of it (a retry); trace a new request instead")
            } else if let context {
                print(WaterfallView.text(result.trace, traceparent: context.description))
            }
        }
        if result.isUnknown {
            printError("fluxbus: the outcome of #\(result.sequence) is not known yet: a store's replicas did not answer in "
                + "time. It is in the log, and they apply it when they return; do not send it again under a new id. "
                + "To see its outcome later, send it again with --request-id \(requestID)")
            throw ExitCode(6)
        }
        if result.isUnhandled {
            printError("fluxbus: no store handled #\(result.sequence): no store on the bus handles `\(type)`. It is in the log: "
                + "no store on the bus now applies it, and a store that joins later and handles it builds its state from it. "
                + "Check the action type's name (`fluxbus status` lists the stores), or start a worker with a store that handles it")
        }
        if !result.succeeded { throw ExitCode(1) }
    }
}

extension DispatchCommand {
    /// What `--batch --json` prints per batch.
    struct BatchJSON: Codable {
        struct Failure: Codable {
            let seq: UInt64
            let store: String
            let worker: String
            let status: String
            let message: String
        }
        let firstSeq: UInt64
        let count: UInt32
        let elapsedMicros: UInt64
        let failures: [Failure]
    }

    func runBatch() async throws {
        guard payload == "{}" else {
            throw reportFailure(BusError(code: .usage, message: "--batch reads payloads from standard input; give no payload argument"))
        }
        let (type, error, prefix) = (type, error, requestId)
        // With --request-id, each batch's id derives from it, so rerunning the same input is idempotent.
        func requestID(_ index: Int) -> String { prefix.map { "\($0)-\(index)" } ?? UUID().uuidString }
        let input: BatchInput
        do {
            input = try BatchInput(
                readAllStandardInput(), batchSize: batchSize, maxPayloadBytes: maxPayloadBytes,
                makeMessage: { .dispatchBatch(.init(requestID: requestID($0), actions: $1)) },
                action: { BatchAction(actionType: type, payload: $0, error: error) })
        } catch {
            throw reportFailure(error)
        }
        let actions = input.lines.map { BatchAction(actionType: type, payload: $0.payload, error: error) }
        // A bar only when there is something to wait for.
        let progress = actions.count >= 100 ? ProgressBar.make("dispatch") : nil
        let (results, stop): ([Message.BatchResult], BatchStop?) = try await withClient(connection) { client in
            var results: [Message.BatchResult] = []
            for (index, batch) in input.batches.enumerated() {
                let id = requestID(index)
                do {
                    results.append(try await client.dispatchBatch(Array(actions[batch]), requestID: id))
                } catch let failure as BusError {
                    return (results, BatchStop(input: input, results: results, requestID: id, error: failure, idempotent: prefix != nil))
                }
                progress?.update(batch.upperBound, of: actions.count)
            }
            return (results, nil)
        }
        progress?.finish()
        if let stop {
            if json {
                try printJSONLines(results)
                print(String(decoding: try Self.encoder.encode(stop.json), as: UTF8.self))
            } else {
                print(stop.text)
            }
            throw reportFailure(stop.error)
        }
        let failures = results.flatMap(\.failures)
        if json {
            try printJSONLines(results)
        } else {
            let range = results.first.map { "#\($0.firstSequence) to #\(results.last!.lastSequence)" }
            let micros = results.reduce(UInt64(0)) { $0 + $1.elapsedMicros }
            print("\(actions.count) dispatched as \(type) in \(results.count) batch\(results.count == 1 ? "" : "es")"
                + (range.map { ", \($0)" } ?? "") + ", \(Set(failures.map(\.sequence)).count) with a store that failed, was skipped or is unknown, or no store"
                + (micros > 0 ? String(format: "; %.0f actions/s on the bus", Double(actions.count) / (Double(micros) / 1e6)) : ""))
            for failure in failures.prefix(10) {
                // A failure without a store is an action no store handled.
                let store = failure.outcome.store.isEmpty ? "(no store)" : failure.outcome.store
                print("  #\(failure.sequence) \(store) \(failure.outcome.status) on \(failure.outcome.worker.isEmpty ? "-" : failure.outcome.worker): \(failure.outcome.message)")
            }
        }
        // Unknown outcomes first: the one answer a client must not take for "not applied".
        if failures.contains(where: { $0.outcome.status == .unknown }) { throw ExitCode(6) }
        if !failures.isEmpty { throw ExitCode(1) }
    }

    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }()

    /// One object per batch answered.
    private func printJSONLines(_ results: [Message.BatchResult]) throws {
        for result in results {
            let line = BatchJSON(
                firstSeq: result.firstSequence, count: result.count, elapsedMicros: result.elapsedMicros,
                failures: result.failures.map {
                    .init(seq: $0.sequence, store: $0.outcome.store, worker: $0.outcome.worker,
                          status: $0.outcome.status.description, message: $0.outcome.message)
                })
            print(String(decoding: try Self.encoder.encode(line), as: UTF8.self))
        }
    }

    private func readAllStandardInput() -> [UInt8] {
        Array(FileHandle.standardInput.readDataToEndOfFile())
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
        return try validated(Array(data), origin: origin)
    }

    /// The payload's bytes, once checked to be JSON.
    static func validated(_ bytes: [UInt8], origin: String) throws(BusError) -> [UInt8] {
        do {
            // The bus's own strict reader: it checks a million-line batch several times faster than Foundation. It
            // also refuses a repeated key, which a store would read as its first value, perhaps not the one meant.
            _ = try JSONValue(newPayload: bytes)
        } catch {
            throw BusError(
                code: .usage,
                message: "the payload (\(origin)) is not valid JSON (\(error)): \(String(decoding: bytes.prefix(80), as: UTF8.self)); "
                    + "quote it for the shell, for example '{\"by\":1}'")
        }
        return bytes
    }
}
