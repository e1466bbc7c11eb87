import Flux
import Foundation
import FluxBus
import FluxBusProtocol
import FluxStores
import Testing

/// What a bus of `kv` replicas must hold after a known run, and the proofs that each replica got there by applying
/// every sequence exactly once, in order.
///
/// Why `kv` and journals rather than a counter: `counter.add {"by":1}` sums to the same total in any order, and a
/// replica that applied one action twice and missed another still ends at the right total. Here dispatch `i` does
/// `kv.set {"key":"k<i % keys>","value":i}`, so the final map holds, for each key, the value of the last dispatch
/// that wrote it: a replica that applied an older write after a newer one, or missed the last write of a key, ends
/// with another map and another digest. A duplicate of `kv.set` is invisible in any state (setting a key twice is
/// setting it once), and so is a reordering of writes to different keys; so each replica also runs with
/// `--journal`, one line per store per dispatch, and its journal must list the run's sequences exactly: each once,
/// none missing, in increasing order. The keys wrap (`keys`, 64) rather than growing one per dispatch, because every
/// acknowledgement digests the whole state: thousands of keys would make each dispatch cost milliseconds per replica.
struct KVHistory {
    static let keys = 64

    /// The map every replica must hold.
    private(set) var state: [String: JSONValue] = [:]
    /// The sequences completed, in the order the coordinator answered them.
    private(set) var sequences: [UInt64] = []

    static func key(_ index: Int) -> String { "k\(index % keys)" }
    static func payload(_ index: Int) -> String { #"{"key":"\#(key(index))","value":\#(index)}"# }

    /// Records a dispatch that completed: `key` took `value` at `sequence`. Sequences must come in order, one more
    /// than the last: a client alone on the bus sees every sequence.
    mutating func record(key: String, value: Int, sequence: UInt64) {
        #expect(sequence == (sequences.last ?? 0) + 1, "#\(sequence) after #\(sequences.last ?? 0): a sequence was skipped or reused")
        state[key] = .number(JSONNumber(value))
        sequences.append(sequence)
    }

    /// Dispatch `index` of a run, recorded when it succeeds.
    @discardableResult
    mutating func dispatch(_ index: Int, client: BusClient, timeout: Duration? = nil) async throws -> DispatchResult {
        let result = try await client.dispatch("kv.set", json: Self.payload(index), timeout: timeout)
        #expect(result.succeeded, "#\(result.sequence): \(result.outcomes)")
        record(key: Self.key(index), value: index, sequence: result.sequence)
        return result
    }

    /// The digest of ``state``, as a replica holding it reports it: kv's map digest (PROTOCOL.md, Appendix A).
    var digest: UInt64 { KVState(state).stateDigest }

    /// Waits until `replicas` replicas of `kv` are live and report the digest of ``state``. A replica that caught up
    /// by replay reports its digest only with its next acknowledgement, so probes (`kv.set {"key":"probe"}`, part of
    /// the history like any other dispatch) refresh them.
    mutating func expectReplicasHold(_ replicas: Int, client: BusClient, cluster: Cluster) async throws {
        try await cluster.waitUntilLive(replicas, client: client)
        let deadline = ContinuousClock.now.advanced(by: .seconds(20))
        var last: DispatchResult?
        while ContinuousClock.now < deadline {
            let result = try await client.dispatch("kv.set", json: #"{"key":"probe","value":0}"#)
            #expect(result.succeeded, "#\(result.sequence): \(result.outcomes)")
            record(key: "probe", value: 0, sequence: result.sequence)
            last = result
            if result.outcomes.count == replicas, result.outcomes.allSatisfy({ $0.status == .ok && $0.digest == digest }) {
                // One replica's whole map, read back, is the expected one (the digests say the others' are too).
                let read = try await client.state(of: "kv")
                #expect(try JSONCoding.decode([String: JSONValue].self, from: read.state) == state)
                return
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        Issue.record("the \(replicas) replicas of kv did not all reach the expected map (digest \(digest)); last probe: \(last?.outcomes ?? [])\n\(cluster.allLogs())")
    }

    /// A journal written by one worker process that ran through the whole history: exactly ``sequences``, each once,
    /// in order, every one `ok`.
    func expectJournal(_ url: URL, of worker: String) throws {
        let entries = try JournalEntry.read(url).filter { $0.store == "kv" }
        let applied = entries.map(\.sequence)
        #expect(applied == sequences, "\(worker) applied \(Self.describe(applied)), the bus completed \(Self.describe(sequences))")
        #expect(entries.allSatisfy { $0.status == "ok" }, "\(worker): \(entries.filter { $0.status != "ok" }.prefix(5))")
    }

    /// A journal of a process that was killed part-way: a prefix of ``sequences``, each once, in order.
    func expectJournalPrefix(_ url: URL, of worker: String) throws -> Int {
        let applied = try JournalEntry.read(url).filter { $0.store == "kv" }.map(\.sequence)
        #expect(applied == Array(sequences.prefix(applied.count)), "\(worker) applied \(Self.describe(applied)): not a prefix of the run")
        return applied.count
    }

    /// A short description of a list of sequences: its length, its ends, and its first irregularity.
    static func describe(_ sequences: [UInt64]) -> String {
        guard let first = sequences.first, let last = sequences.last else { return "nothing" }
        let irregular = zip(sequences, sequences.dropFirst()).first { $1 != $0 + 1 }
        return "\(sequences.count) sequences #\(first)…#\(last)" + (irregular.map { ", #\($1) after #\($0)" } ?? "")
    }
}

/// What a `fluxbus` command run to its end printed and how it exited.
struct CommandExit: CustomStringConvertible {
    let status: Int32
    let timedOut: Bool
    let output: String
    let error: String

    var description: String { "exit \(status)\(timedOut ? " (killed: no exit in time)" : "")\nstdout: \(output)\nstderr: \(error)" }
}

extension Cluster {
    /// Runs `fluxbus ARGUMENTS…` in the cluster's directory until it exits, with standard input from `input`;
    /// SIGKILLs it if it is still running after `limit` (a liveness bound: the test then fails on `timedOut`).
    func run(_ name: String, _ arguments: [String], input: URL? = nil, within limit: Duration = .seconds(30)) async throws -> CommandExit {
        let process = Process()
        process.executableURL = Cluster.binary
        process.arguments = arguments
        process.currentDirectoryURL = directory
        process.standardInput = try input.map { try FileHandle(forReadingFrom: $0) } ?? FileHandle.nullDevice
        let outputURL = directory.appendingPathComponent("\(name).stdout")
        let errorURL = directory.appendingPathComponent("\(name).stderr")
        _ = FileManager.default.createFile(atPath: outputURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errorURL.path, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: outputURL)
        process.standardError = try FileHandle(forWritingTo: errorURL)
        try process.run()
        let deadline = ContinuousClock.now.advanced(by: limit)
        while process.isRunning, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        let timedOut = process.isRunning
        if timedOut { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        return CommandExit(
            status: process.terminationStatus, timedOut: timedOut,
            output: (try? String(contentsOf: outputURL, encoding: .utf8)) ?? "",
            error: (try? String(contentsOf: errorURL, encoding: .utf8)) ?? "")
    }
}
