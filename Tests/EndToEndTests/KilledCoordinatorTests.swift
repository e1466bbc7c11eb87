import Flux
import Foundation
import FluxBusProtocol
import FluxStores
import GRDB
import Synchronization
import Testing

@testable import FluxBus

/// The issue's test, tightened: a coordinator SIGKILLed again and again under load, restarted on the same data
/// directory, loses no acknowledged request, applies none twice, and both recovery paths demonstrably run:
/// a request id acknowledged before a kill gets its original sequence after it, and an action logged but not
/// completed at a kill is dispatched again under its own sequence.
///
/// On `--sync always`: a SIGKILL cannot tell `always` from `off`, since the kernel keeps the dead process's writes in
/// its page cache either way; only a power cut can. So this test pins `--sync always` (and checks that the
/// coordinator reports it), checks the log file itself, read the moment the process is dead, for every request
/// acknowledged before the kill; and ``SyncTests`` shows, by tracing the coordinator's system calls, that `always`
/// fsyncs each commit before it answers while `off` never syncs.
@Suite("A coordinator killed under load", .serialized, .timeLimit(.minutes(1)))
struct KilledCoordinatorTests {
    static let total = 4_000
    static let clientCount = 4
    static let kills = 4

    /// The heartbeat: 500 ms, a 2 s liveness deadline, so that a replica stalled by the loaded machine is not written
    /// off (and a dispatch recorded `lost`), which the test counts as a failure.
    static func startCoordinator(_ cluster: Cluster, run: Int) throws -> Process {
        try cluster.start("coordinator-\(run)", [
            "coordinator", "--control", cluster.control, "--publish", cluster.publish, "--heartbeat-ms", "500",
            "--sync", "always",
        ])
    }

    static func isRetryable(_ error: BusError) -> Bool {
        error.code == .unreachable || error.remoteCode == .shuttingDown || error.remoteCode == .busy
    }

    /// What the dead coordinator's log holds, as its restart reads it: log.sqlite with its WAL, and the commits that
    /// only log.journal held (SQLite applies the journal's records in groups), opened in a copy of the data directory.
    static func readLog(_ cluster: Cluster) throws -> [Row] {
        let copy = cluster.directory.appendingPathComponent("dead-log-\(UUID().uuidString.prefix(8))")
        try FileManager.default.copyItem(at: cluster.directory.appendingPathComponent("fluxbus-data"), to: copy)
        defer { try? FileManager.default.removeItem(at: copy) }
        let log = try ActionLog(directory: copy.path, sync: .off)
        _ = try log.recover()
        return try log.database.read { db in
            try LoggedActions.rows(db)
        }
    }

    /// Every request answered so far, with its sequence; the clients write it, the killer reads it.
    final class Answered: Sendable {
        private let sequences = Mutex<[String: UInt64]>([:])
        func record(_ requestID: String, _ sequence: UInt64) { sequences.withLock { $0[requestID] = sequence } }
        var all: [String: UInt64] { sequences.withLock { $0 } }
    }

    /// What a client was told: the request, its sequence, and how the RESULT summed up kv.
    struct Answer: Sendable {
        let requestID: String
        let key: String
        let value: Int
        let sequence: UInt64
        let kv: OutcomeStatus?
        let outcomes: [Outcome]
    }

    /// What the log file held the moment a coordinator died.
    struct Kill: Sendable {
        let run: Int
        /// Requests acknowledged to their clients before the SIGKILL, with their sequences.
        let acknowledged: [String: UInt64]
        /// Rows of the dead coordinator's log: request id → (sequence, completed).
        let logged: [String: (sequence: UInt64, done: Bool)]
        /// Whether the replicas were stopped, so that a dispatch was surely in flight.
        let replicasStopped: Bool
    }

    @Test func aCoordinatorKilledUnderLoadLosesNoAcknowledgedRequestAndAppliesNoneTwice() async throws {
        let cluster = try Cluster()
        var coordinator = try Self.startCoordinator(cluster, run: 0)
        let replicas = ["r1", "r2", "r3"]
        func journal(_ id: String) -> URL { cluster.directory.appendingPathComponent("\(id).journal") }
        for id in replicas {
            try cluster.startWorker(id, stores: ["kv=kv"], extra: ["--log-level", "notice", "--journal", journal(id).path])
        }
        let probe = try await cluster.client(timeout: .seconds(5))
        try await cluster.waitUntilLive(3, client: probe)
        #expect(try await probe.status().logSync == "always")

        let answered = Answered()
        var answers: [Answer] = []
        var kills: [Kill] = []
        try await withThrowingTaskGroup(of: [Answer].self) { group in
            for clientNumber in 0..<Self.clientCount {
                group.addTask {
                    let client = try await cluster.client(timeout: .seconds(2))
                    var mine: [Answer] = []
                    for index in 0..<(Self.total / Self.clientCount) {
                        let (requestID, key, json) = Self.request(client: clientNumber, index: index)
                        let giveUp = ContinuousClock.now.advanced(by: .seconds(40))
                        while true {
                            do {
                                let result = try await client.dispatch("kv.set", json: json, requestID: requestID)
                                let kv = result.stores.first { $0.name == "kv" }?.status
                                mine.append(.init(requestID: requestID, key: key, value: index, sequence: result.sequence,
                                                  kv: kv, outcomes: kv == .ok ? [] : result.outcomes))
                                answered.record(requestID, result.sequence)
                                break
                            } catch let error as BusError where Self.isRetryable(error) && ContinuousClock.now < giveUp {
                                try await Task.sleep(for: .milliseconds(20))
                            }
                        }
                    }
                    await client.close()
                    return mine
                }
            }
            // The killer. Odd runs: SIGKILL right after the threshold's acknowledgement, whatever is in hand. Even
            // runs: the replicas are SIGSTOPped first, so the dispatch in flight cannot complete; once the log holds
            // an action beyond the last completed one, SIGKILL, then SIGCONT (within the 2 s deadline).
            for run in 1...Self.kills {
                let threshold = Self.total * run / (Self.kills + 1)
                let waitUntil = ContinuousClock.now.advanced(by: .seconds(30))
                while answered.all.count < threshold, ContinuousClock.now < waitUntil {
                    try await Task.sleep(for: .milliseconds(5))
                }
                let stopReplicas = run % 2 == 0
                if stopReplicas {
                    for id in replicas { kill(try #require(cluster.pid(id)), SIGSTOP) }
                    let inFlightBy = ContinuousClock.now.advanced(by: .seconds(1))
                    while ContinuousClock.now < inFlightBy {
                        if let status = try? await probe.status(timeout: .milliseconds(500)), status.logLast > status.sequence { break }
                    }
                }
                let acknowledged = answered.all
                kill(coordinator.processIdentifier, SIGKILL)
                coordinator.waitUntilExit()
                if stopReplicas { for id in replicas { kill(try #require(cluster.pid(id)), SIGCONT) } }
                var logged: [String: (UInt64, Bool)] = [:]
                for row in try Self.readLog(cluster) { logged[row["requestID"] ?? ""] = (row["sequence"], row["done"]) }
                kills.append(.init(run: run - 1, acknowledged: acknowledged, logged: logged, replicasStopped: stopReplicas))
                coordinator = try Self.startCoordinator(cluster, run: run)

                // The request-id path: the last request acknowledged and completed in the log before the kill, sent
                // again to the restarted coordinator, gets its original sequence.
                let completed = acknowledged.filter { logged[$0.key]?.1 == true }.max { $0.value < $1.value }
                let (requestID, sequence) = try #require(completed, "run \(run - 1): no acknowledged request completed in the log")
                let retried = try await Self.retry(requestID, client: probe)
                #expect(retried == sequence, "\(requestID) was #\(sequence) before kill \(run), #\(retried.map(String.init) ?? "nothing") after")
            }
            for try await mine in group { answers += mine }
        }

        // Every kill came while clients were still sending, and every restarted coordinator resumed from the log.
        #expect(kills.allSatisfy { $0.acknowledged.count < Self.total }, "a kill came after the clients were done")
        for run in 1...Self.kills {
            #expect(cluster.log("coordinator-\(run)").contains("recovered the log"), "coordinator-\(run) did not resume from the log")
        }
        // Whether a kill found commits in log.journal only is up to timing here (the clients' queued requests go to
        // SQLite directly and take the journal's records with them): JournalKillTests makes sure one does.
        // No acknowledged request lost: each was in the dead coordinator's log file, under the sequence it was told.
        for kill in kills {
            let missing = kill.acknowledged.filter { kill.logged[$0.key]?.sequence != $0.value }
            #expect(missing.isEmpty, "run \(kill.run): \(missing.count) acknowledged requests not in log.sqlite after SIGKILL, e.g. \(missing.prefix(3))")
        }
        // The re-dispatch path: each kill with stopped replicas left an action logged and not completed, and that
        // request was answered under the sequence it had been logged with.
        let bySequence = Dictionary(answers.map { ($0.requestID, $0.sequence) }, uniquingKeysWith: { a, _ in a })
        for kill in kills where kill.replicasStopped {
            let pending = kill.logged.filter { !$0.value.done }
            #expect(!pending.isEmpty, "run \(kill.run): nothing was in flight when the coordinator was killed")
            for (requestID, row) in pending {
                #expect(bySequence[requestID] == row.sequence, "\(requestID) was logged as #\(row.sequence), answered as #\(bySequence[requestID].map(String.init) ?? "nothing")")
            }
            #expect(Self.redispatched(cluster, run: kill.run + 1) >= pending.count, "coordinator-\(kill.run + 1) dispatched fewer again than were pending")
        }

        // Every request answered, with kv ok: no acknowledged dispatch has its only store lost.
        #expect(answers.count == Self.total && Set(answers.map(\.requestID)).count == Self.total)
        let notOK = answers.filter { $0.kv != .ok }
        #expect(notOK.isEmpty, "\(notOK.count) results without kv ok, e.g. \(notOK.prefix(2))\n\(cluster.allLogs())")
        #expect(Set(answers.map(\.sequence)).count == Self.total, "two requests were answered with one sequence")

        // The final log: every action completed, each request once, under the sequence its client was told.
        try await Self.expectLogSettles(cluster, answers: answers)

        // The replicas: the exact map, and each journal lists every sequence once, in order.
        var expected: [String: JSONValue] = [:]
        for answer in answers.sorted(by: { $0.sequence < $1.sequence }) { expected[answer.key] = .number(JSONNumber(answer.value)) }
        let status = try await Self.probeUntilEqual(expected, replicas: 3, client: probe, cluster: cluster)
        await probe.close()
        let statuses = await cluster.stop()
        for name in replicas + ["coordinator-\(Self.kills)"] {
            #expect(statuses[name] == 0, "\(name) exited \(statuses[name].map(String.init) ?? "?")")
        }
        print("killed coordinator: kills after \(kills.map(\.acknowledged.count)) answers; in flight at each kill "
              + "\(kills.map { $0.logged.values.filter { !$0.done }.count }); dispatched again after each restart "
              + "\((1...Self.kills).map { Self.redispatched(cluster, run: $0) }); the log ends at #\(status)")
        for id in replicas {
            let applied = try JournalEntry.read(journal(id)).filter { $0.store == "kv" }
            #expect(applied.map(\.sequence) == Array(1...status), "\(id) applied \(KVHistory.describe(applied.map(\.sequence))), the log holds #1…#\(status)")
            #expect(applied.allSatisfy { $0.status == "ok" })
        }
    }

    /// The request a client sends as its `index`th: its id, key and payload.
    static func request(client: Int, index: Int) -> (id: String, key: String, json: String) {
        let key = "c\(client)-\(index % 16)"
        return ("c\(client)-\(index)", key, #"{"key":"\#(key)","value":\#(index)}"#)
    }

    /// Sends a request again, with its id and payload, until a RESULT comes (the restarted coordinator may still be
    /// waiting for its replicas).
    static func retry(_ requestID: String, client: BusClient) async throws -> UInt64? {
        let parts = requestID.dropFirst().split(separator: "-").compactMap { Int($0) }
        guard parts.count == 2 else { return nil }
        let json = request(client: parts[0], index: parts[1]).json
        let giveUp = ContinuousClock.now.advanced(by: .seconds(20))
        while ContinuousClock.now < giveUp {
            if let result = try? await client.dispatch("kv.set", json: json, requestID: requestID, timeout: .seconds(2)) {
                return result.sequence
            }
        }
        return nil
    }

    /// `toDispatchAgain=` from a coordinator's "recovered the log" line, or -1.
    static func redispatched(_ cluster: Cluster, run: Int) -> Int {
        guard let line = cluster.log("coordinator-\(run)").split(separator: "\n").first(where: { $0.contains("recovered the log") }),
            let field = line.range(of: "toDispatchAgain=")
        else { return -1 }
        return Int(line[field.upperBound...].prefix { $0.isNumber }) ?? -1
    }

    /// Reads the log until every action has completed (a completion is committed a tick after its RESULT), then
    /// checks that each answered request is there once, under its sequence, and nothing else is.
    static func expectLogSettles(_ cluster: Cluster, answers: [Answer]) async throws {
        var rows: [Row] = []
        let deadline = ContinuousClock.now.advanced(by: .seconds(5))
        repeat {
            if !rows.isEmpty { try await Task.sleep(for: .milliseconds(100)) }
            rows = try readLog(cluster)
        } while rows.contains(where: { !($0["done"] as Bool) }) && ContinuousClock.now < deadline
        #expect(rows.allSatisfy { $0["done"] as Bool }, "actions logged and never completed")
        let logged = Dictionary(grouping: rows, by: { $0["requestID"] as String? ?? "" }).mapValues { $0.map { $0["sequence"] as UInt64 } }
        let wrong = answers.filter { logged[$0.requestID] != [$0.sequence] }
        #expect(wrong.isEmpty, "\(wrong.count) answered requests not in the log exactly once under their sequence, e.g. \(wrong.prefix(2).map { "\($0.requestID) #\($0.sequence): \(logged[$0.requestID] ?? [])" })")
        let strangers = Set(logged.keys).subtracting(answers.map(\.requestID))
        #expect(strangers.isEmpty, "the log holds requests nobody was answered for: \(strangers.prefix(5))")
    }

    /// Probes until all replicas report the digest of `expected` plus the probe key; returns the last sequence.
    static func probeUntilEqual(_ expected: [String: JSONValue], replicas: Int, client: BusClient, cluster: Cluster) async throws -> UInt64 {
        var state = expected
        state["probe"] = .number(0)
        let digest = KVState(state).stateDigest
        let deadline = ContinuousClock.now.advanced(by: .seconds(20))
        var probes = 0
        while ContinuousClock.now < deadline {
            probes += 1
            let result = try await client.dispatch("kv.set", json: #"{"key":"probe","value":0}"#, requestID: "probe-\(probes)")
            if result.outcomes.count == replicas, result.outcomes.allSatisfy({ $0.status == .ok && $0.digest == digest }) {
                let read = try await client.state(of: "kv")
                #expect(try JSONCoding.decode([String: JSONValue].self, from: read.state) == state)
                return result.sequence
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        Issue.record("the replicas never all held the expected map\n\(cluster.allLogs())")
        return try await client.status().sequence
    }
}
