import Foundation
import FluxBus
import FluxBusProtocol
import Testing

/// `fluxbus dispatch --batch` checks its whole input before it sends anything, and when a batch fails part-way says
/// exactly which input lines were applied, under which sequences, and which were not.
@Suite("dispatch --batch input", .timeLimit(.minutes(1)))
struct BatchInputTests {
    static func write(_ lines: [String], in cluster: Cluster) throws -> URL {
        let url = cluster.directory.appendingPathComponent("input-\(UUID().uuidString).jsonl")
        try Data(lines.joined(separator: "\n").utf8).write(to: url)
        return url
    }

    static func sequence(_ cluster: Cluster) async throws -> UInt64 {
        let client = try await cluster.client()
        defer { Task { await client.close() } }
        return try await client.status().sequence
    }

    @Test func aLineOverThePayloadLimitSendsNothing() async throws {
        let cluster = try Cluster()
        try cluster.startCoordinator(["--in-memory"])
        let big = #"{"by":1,"pad":""# + String(repeating: "x", count: 1_100_000) + #""}"#
        let input = try Self.write([#"{"by":1}"#, #"{"by":1}"#, big, #"{"by":1}"#, "{by:1}"], in: cluster)
        let run = try CommandLineTests.fluxbus(
            ["dispatch", "counter.add", "--batch", "--batch-size", "2", "--coordinator", cluster.control], input: input)
        #expect(run.status == 2, "\(run.error)")
        #expect(run.error.contains("nothing was sent: 2 lines of standard input cannot be dispatched"), "\(run.error)")
        #expect(run.error.contains("line 3 is 1100017 bytes, over the limit of 1048576 bytes for one payload"), "\(run.error)")
        #expect(run.error.contains("line 5 of standard input) is not valid JSON"), "\(run.error)")
        #expect(try await Self.sequence(cluster) == 0, "nothing was dispatched")

        // A batch over the 16 MiB message limit is refused before anything is sent, too.
        let wide = #"{"by":1,"pad":""# + String(repeating: "x", count: 900_000) + #""}"#
        let many = try Self.write([#"{"by":1}"#] + Array(repeating: wide, count: 20), in: cluster)
        let tooWide = try CommandLineTests.fluxbus(
            ["dispatch", "counter.add", "--batch", "--batch-size", "20", "--coordinator", cluster.control], input: many)
        #expect(tooWide.status == 2, "\(tooWide.error)")
        #expect(tooWide.error.contains("nothing was sent: the batch of lines 1-20 is too large"), "\(tooWide.error)")
        #expect(tooWide.error.contains("lower --batch-size (now 20)"), "\(tooWide.error)")
        #expect(try await Self.sequence(cluster) == 0, "nothing was dispatched")
        await cluster.stop()
    }

    /// The input is read as bytes: a line ending in CR LF is one line, and a payload whose string is not valid UTF-8
    /// is refused (decoding the input as text first had replaced such bytes with U+FFFD and sent that).
    @Test func crLfEndsALineAndInvalidUTF8IsRefused() async throws {
        let cluster = try Cluster()
        try cluster.startCoordinator(["--in-memory"])
        let arguments = ["dispatch", "counter.add", "--batch", "--json", "--coordinator", cluster.control]
        let windows = cluster.directory.appendingPathComponent("windows.jsonl")
        try Data(#"{"by":1}"#.utf8 + [0x0D, 0x0A, 0x20, 0x0D, 0x0A] + #"{"by":2}"#.utf8 + [0x0D, 0x0A]).write(to: windows)
        let run = try CommandLineTests.fluxbus(arguments, input: windows)
        // No worker hosts `counter`, so both are unhandled (exit 1), but dispatched: lines 1 and 3, line 2 blank.
        #expect(run.status == 1, "\(run.error)")
        #expect(try await Self.sequence(cluster) == 2, "\(run.output) \(run.error)")

        let damaged = cluster.directory.appendingPathComponent("damaged.jsonl")
        try Data(#"{"by":1}"#.utf8 + [0x0A] + #"{"by":1,"note":""#.utf8 + [0xC3, 0x28] + #""}"#.utf8 + [0x0A]).write(to: damaged)
        let refused = try CommandLineTests.fluxbus(arguments, input: damaged)
        #expect(refused.status == 2, "\(refused.error)")
        #expect(refused.error.contains("nothing was sent: 1 line of standard input cannot be dispatched"), "\(refused.error)")
        #expect(refused.error.contains("line 2 of standard input) is not valid JSON"), "\(refused.error)")
        #expect(refused.error.contains("UTF-8"), "\(refused.error)")
        #expect(try await Self.sequence(cluster) == 2, "nothing more was dispatched")
        await cluster.stop()
    }

    /// The coordinator takes payloads of at most 200 bytes, the CLI is told 1000: the third batch (input lines 6-7)
    /// is refused, after two were applied. Line 3 is blank: line numbers are the input's own.
    @Test func aBatchRefusedPartWaySaysWhichLinesWereApplied() async throws {
        let cluster = try Cluster()
        try cluster.startCoordinator(["--in-memory", "--max-payload-bytes", "200"])
        let big = #"{"by":1,"pad":""# + String(repeating: "x", count: 300) + #""}"#
        let small = #"{"by":1}"#
        let input = try Self.write([small, small, "", small, small, big, small, small], in: cluster)
        let arguments = [
            "dispatch", "counter.add", "--batch", "--batch-size", "2", "--max-payload-bytes", "1000",
            "--coordinator", cluster.control,
        ]
        let run = try CommandLineTests.fluxbus(arguments, input: input)
        #expect(run.status == 4, "refused: \(run.error)")
        let lines = run.output.split(separator: "\n").map(String.init)
        #expect(lines.count == 6, "\(run.output)")
        #expect(lines.first?.hasPrefix("stopped at batch 3 of 4: action 1 of the batch: the payload of 317 bytes is over this coordinator's limit of 200 bytes") == true, "\(run.output)")
        #expect(Array(lines.dropFirst()) == [
            "applied: lines 1-5 (4 actions) as #1 to #4",
            "  lines 1-2: #1 to #2",
            "  lines 4-5: #3 to #4",
            "not applied: lines 6-7 (refused whole)",
            "not sent: line 8",
        ], "\(run.output)")
        #expect(try await Self.sequence(cluster) == 4, "exactly the lines reported applied were dispatched")

        let json = try CommandLineTests.fluxbus(arguments + ["--json", "--request-id", "import"], input: input)
        #expect(json.status == 4)
        let objects = json.output.split(separator: "\n")
        #expect(objects.count == 3, "one object per batch applied, then what stopped: \(json.output)")
        let stop = try JSONSerialization.jsonObject(with: Data(objects.last!.utf8)) as? [String: Any]
        #expect(stop?["appliedLines"] as? [Int] == [1, 5])
        #expect(stop?["notSentLines"] as? [Int] == [8, 8])
        let failed = stop?["failed"] as? [String: Any]
        #expect(failed?["batch"] as? Int == 3)
        #expect(failed?["lines"] as? [Int] == [6, 7])
        #expect(failed?["outcome"] as? String == "not applied")
        #expect(failed?["requestId"] as? String == "import-2")
        await cluster.stop()
    }

    /// A batch that gets no answer (its worker is stopped, the CLI's --timeout passes) has an unknown outcome: the
    /// run says so and names the lines not sent. Running the same input again with the same --request-id, once the
    /// worker runs, applies every line exactly once.
    @Test func aBatchWithNoAnswerIsReportedUnknownAndARerunAppliesNothingTwice() async throws {
        let cluster = try Cluster()
        // A long deadline: the stopped worker must hold the batch in flight, not be written off.
        try cluster.startCoordinator(["--in-memory", "--heartbeat-ms", "10000", "--ack-timeout", "50"])
        let worker = try cluster.startWorker("w1", stores: ["counter=counter"])
        let client = try await cluster.client()
        try await cluster.waitUntilLive(1, client: client)
        kill(worker.processIdentifier, SIGSTOP)
        defer { kill(worker.processIdentifier, SIGCONT) }
        let input = try Self.write(Array(repeating: #"{"by":1}"#, count: 4), in: cluster)
        let arguments = [
            "dispatch", "counter.add", "--batch", "--batch-size", "2", "--request-id", "imp", "--coordinator", cluster.control,
        ]
        let first = try CommandLineTests.fluxbus(arguments + ["--timeout", "1"], input: input)
        #expect(first.status == 3, "no answer: \(first.error)")
        #expect(first.output.split(separator: "\n").map(String.init).dropFirst() == [
            "applied: nothing",
            "unknown: lines 1-2 may or may not have been applied (request id imp-0); run the same input again with the "
                + "same --request-id and --batch-size to learn the outcome without applying anything twice",
            "not sent: lines 3-4",
        ], "\(first.output)")

        kill(worker.processIdentifier, SIGCONT)
        let again = try CommandLineTests.fluxbus(arguments + ["--timeout", "30"], input: input)
        #expect(again.status == 0, "\(again.output)\n\(again.error)")
        let counter = try await client.state(of: "counter")
        #expect(String(decoding: counter.state, as: UTF8.self) == #"{"value":4}"#, "every line applied once")
        await client.close()
        await cluster.stop()
    }
}
