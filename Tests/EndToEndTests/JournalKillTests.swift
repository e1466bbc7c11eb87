import Foundation
import FluxBus
import FluxBusProtocol
import Testing

/// The journal ahead of SQLite, under a real SIGKILL: a dispatch's commit sits in `log.journal` alone until SQLite
/// applies it (at the next 50 ms tick, or with the next commit that goes to SQLite directly), and a coordinator killed
/// then must apply it at its restart and dispatch it again, exactly once. ``KilledCoordinatorTests``' load seldom
/// leaves a commit there at the kill (its clients' queued requests go to SQLite directly, and take the journal's
/// records with them); here one request at a time does, with the replica stopped so that nothing follows it.
@Suite("A coordinator killed with a commit only its journal held", .serialized, .timeLimit(.minutes(1)))
struct JournalKillTests {
    @Test func itsRestartAppliesTheCommitAndDispatchesItOnce() async throws {
        let cluster = try Cluster()
        let journal = cluster.directory.appendingPathComponent("w1.journal")
        var run = 1
        var coordinator = try KilledCoordinatorTests.startCoordinator(cluster, run: run)
        let worker = try cluster.startWorker("w1", stores: ["counter=counter"], extra: ["--journal", journal.path])
        let probe = try await cluster.client(timeout: .seconds(2))
        try await cluster.waitUntilLive(1, client: probe)
        _ = try await probe.dispatch("counter.add", json: #"{"by":1}"#)

        // Each attempt: the replica stopped, one dispatch logged, the coordinator killed at once, before its tick.
        // The tick may still come first now and then on a loaded machine, so up to five attempts.
        var applied: [Int] = []
        while run <= 5, !applied.contains(where: { $0 > 0 }) {
            let before = try await Self.settled(probe)
            kill(worker.processIdentifier, SIGSTOP)
            let sender = try await cluster.client(timeout: .seconds(30))
            let pending = Task { _ = try? await sender.dispatch("counter.add", json: #"{"by":1}"#) }
            _ = try await Self.status(of: probe, within: .seconds(10), "the coordinator to log an action after #\(before)") {
                $0.logLast > before
            }
            kill(coordinator.processIdentifier, SIGKILL)
            coordinator.waitUntilExit()
            kill(worker.processIdentifier, SIGCONT)
            run += 1
            coordinator = try KilledCoordinatorTests.startCoordinator(cluster, run: run)
            try await cluster.waitUntilLive(1, client: probe)
            applied.append(Self.journalRecordsApplied(cluster, run: run))
            pending.cancel()
            await sender.close()
        }
        #expect(applied.contains { $0 > 0 }, "no restart found a commit only the journal held: \(applied)\n\(cluster.allLogs())")

        // Every action logged was applied once, in order: the one only the journal held included.
        let last = try await Self.settled(probe)
        let sequences = try JournalEntry.read(journal).map(\.sequence)
        #expect(sequences == Array(1...last), "w1 applied \(sequences), the log ends at #\(last)")
        let state = try await probe.state(of: "counter")
        #expect(String(decoding: state.state, as: UTF8.self) == #"{"value":\#(last)}"#)
        await probe.close()
        await cluster.stop()
    }

    /// Polls STATUS until `holds` is true of it, every `pause`, for at most `limit`; `awaited` says what for.
    static func status(
        of client: BusClient, within limit: Duration, pause: Duration = .zero, _ awaited: String,
        until holds: (Message.Status) -> Bool
    ) async throws -> Message.Status {
        let deadline = ContinuousClock.now.advanced(by: limit)
        while ContinuousClock.now < deadline {
            if let status = try? await client.status(timeout: .seconds(1)), holds(status) { return status }
            if pause > .zero { try await Task.sleep(for: pause) }
        }
        throw ClusterError("waited \(limit) for \(awaited)")
    }

    /// How many records of log.journal the restarted coordinator of `run` applied, from its "recovered the log" line.
    static func journalRecordsApplied(_ cluster: Cluster, run: Int) -> Int {
        let line = cluster.log("coordinator-\(run)").split(separator: "\n").first { $0.contains("recovered the log") } ?? ""
        guard let range = line.range(of: "fromJournal=") else { return 0 }
        return Int(line[range.upperBound...].prefix { $0.isNumber }) ?? 0
    }

    /// Waits until every action logged has completed, and returns the last one's sequence.
    static func settled(_ client: BusClient) async throws -> UInt64 {
        try await status(of: client, within: .seconds(20), pause: .milliseconds(20), "every logged action to complete") {
            $0.sequence == $0.logLast
        }.logLast
    }
}
