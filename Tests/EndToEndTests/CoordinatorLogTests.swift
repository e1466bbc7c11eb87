import Foundation
import FluxBus
import FluxBusProtocol
import FluxBusTools
import GRDB
import Testing

/// What the coordinator promises about its log file, checked on the file itself: request ids outlive compaction,
/// a log from a newer FluxBus is refused, and epochs only go up even when the last one is in the future.
@Suite("The coordinator's log file", .timeLimit(.minutes(1)))
struct CoordinatorLogTests {
    static func logFile(_ cluster: Cluster) -> URL {
        cluster.directory.appendingPathComponent("fluxbus-data/log.sqlite")
    }

    /// Opens the log of a stopped coordinator for writing, as an operator with `sqlite3` would.
    static func edit(_ cluster: Cluster, _ change: @escaping @Sendable (Database) throws -> Void) throws {
        let database = try DatabaseQueue(path: logFile(cluster).path)
        try database.write(change)
        try database.close()
    }

    /// Starts a coordinator on the default data directory, dispatches `count` kv.set, and stops it gracefully.
    static func makeLog(_ cluster: Cluster, dispatches count: Int) async throws {
        try cluster.startCoordinator()
        try cluster.startWorker("w1", stores: ["kv=kv"])
        let client = try await cluster.client()
        try await cluster.waitUntilLive(1, client: client)
        var history = KVHistory()
        for index in 1...count { try await history.dispatch(index, client: client) }
        await client.close()
        let statuses = await cluster.stop()
        #expect(statuses["coordinator"] == 0, "\(statuses)")
    }

    /// `--retain 20`: once compaction drops the early actions from the log, a retry of an early request id still
    /// gets the original sequence, and nothing is dispatched again.
    @Test func aRequestIDOutlivesCompactionOfItsAction() async throws {
        let cluster = try Cluster()
        try cluster.startCoordinator(["--retain", "20"])
        let journal = cluster.directory.appendingPathComponent("w1.journal")
        try cluster.startWorker("w1", stores: ["kv=kv"], extra: ["--journal", journal.path])
        let client = try await cluster.client()
        try await cluster.waitUntilLive(1, client: client)
        var first: [Int: UInt64] = [:]
        for index in 1...100 {
            let result = try await client.dispatch("kv.set", json: KVHistory.payload(index), requestID: "req-\(index)")
            #expect(result.succeeded)
            first[index] = result.sequence
        }
        var status = try await client.status()
        let deadline = ContinuousClock.now.advanced(by: .seconds(20))
        while status.logOldest <= 5, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
            status = try await client.status()
        }
        try #require(status.logOldest > 5, "the log was never compacted: it holds #\(status.logOldest)…#\(status.logLast)\n\(cluster.allLogs())")

        // The retry, by the CLI: the original sequence, from the request table, though #1's action is gone.
        let retry = try await cluster.run("retry", [
            "dispatch", "kv.set", KVHistory.payload(1), "--request-id", "req-1", "--json", "--coordinator", cluster.control,
        ])
        #expect(retry.status == 0, "\(retry)")
        #expect(try JSONDecoder().decode(ResultView.JSON.self, from: Data(retry.output.utf8)).seq == first[1], "\(retry)")
        let again = try await client.dispatch("kv.set", json: KVHistory.payload(3), requestID: "req-3")
        #expect(again.sequence == first[3])
        let after = try await client.status()
        #expect(after.sequence == 100 && after.logLast == 100, "a retry dispatched a new action: the bus is at #\(after.sequence)")
        await client.close()
        await cluster.stop()

        var configuration = Configuration()
        configuration.readonly = true
        let (oldest, requests) = try await DatabaseQueue(path: Self.logFile(cluster).path, configuration: configuration).read { db in
            (try Int.fetchOne(db, sql: "SELECT MIN(sequence) FROM action") ?? 0,
             try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM request WHERE requestID IN ('req-1', 'req-3')") ?? 0)
        }
        #expect(oldest > 3, "the log still holds the early actions (from #\(oldest)): compaction proved nothing")
        #expect(requests == 2)
        // The worker applied each of the 100 once, and nothing for the retries.
        let applied = try JournalEntry.read(journal).map(\.sequence)
        #expect(applied == Array(1...100), "w1 applied \(KVHistory.describe(applied))")
    }

    /// A log whose migrations include one this build does not know was written by a newer FluxBus: the coordinator
    /// exits 5 and says so, naming the file, and leaves it as it was.
    @Test func aLogFromANewerFluxBusStopsTheCoordinatorWithExitFive() async throws {
        let cluster = try Cluster()
        try await Self.makeLog(cluster, dispatches: 5)
        try Self.edit(cluster) { db in
            try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v99-from-a-newer-fluxbus')")
        }

        let coordinator = try await cluster.run("newer", [
            "coordinator", "--control", cluster.processes.endpoint("control-newer"),
            "--publish", cluster.processes.endpoint("publish-newer"), "--data-dir", Self.logFile(cluster).deletingLastPathComponent().path,
        ], within: .seconds(10))
        #expect(!coordinator.timedOut && coordinator.status == 5, "\(coordinator)")
        #expect(coordinator.error.contains("written by a newer FluxBus"), "\(coordinator)")
        #expect(coordinator.error.contains(Self.logFile(cluster).path), "\(coordinator)")
        #expect(!(coordinator.output + coordinator.error).contains("coordinator serving"), "\(coordinator)")
        // Nothing was migrated or emptied: the log still holds its five actions and the newer migration.
        var configuration = Configuration()
        configuration.readonly = true
        let (actions, migrations) = try await DatabaseQueue(path: Self.logFile(cluster).path, configuration: configuration).read { db in
            (try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM action") ?? 0,
             try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations ORDER BY identifier"))
        }
        // Every migration this build knows (v1 to v12), then the newer one, in the table's text order.
        let expected = ((1...12).map { "v\($0)" } + ["v99-from-a-newer-fluxbus"]).sorted()
        #expect(actions == 5 && migrations == expected, "\(actions) actions, migrations \(migrations)")
    }

    /// The clock cannot be turned back in a test, but the log can hold an epoch from the future, which is what a
    /// clock gone back looks like to the coordinator: it takes an epoch greater than every epoch in the log.
    @Test func theEpochGoesUpEvenWhenTheLogsLastEpochIsInTheFuture() async throws {
        let cluster = try Cluster()
        try await Self.makeLog(cluster, dispatches: 3)
        let future = UInt64(Date().timeIntervalSince1970 * 1000) + 10 * 365 * 24 * 3_600 * 1000
        try Self.edit(cluster) { db in
            try db.execute(sql: "INSERT INTO epoch (epoch, startedAt) VALUES (?, ?)", arguments: [future, Date().timeIntervalSince1970])
        }

        try cluster.startCoordinator()
        try cluster.startWorker("w1", stores: ["kv=kv"])
        let status = try await cluster.run("status", [
            "status", "--json", "--wait-ready", "1", "--timeout", "20", "--coordinator", cluster.control,
        ])
        #expect(status.status == 0, "\(status)")
        let epoch = try JSONDecoder().decode(StatusView.JSON.self, from: Data(status.output.utf8)).epoch
        #expect(epoch > future, "epoch \(epoch) is not past the log's last epoch \(future)")
        // The bus runs under it: a dispatch completes under the new epoch and the next sequence.
        let client = try await cluster.client()
        let result = try await client.dispatch("kv.set", json: KVHistory.payload(4))
        #expect(result.succeeded && result.epoch == epoch && result.sequence == 4, "#\(result.sequence) in epoch \(result.epoch)")
        await client.close()
        await cluster.stop()
        var configuration = Configuration()
        configuration.readonly = true
        let epochs = try await DatabaseQueue(path: Self.logFile(cluster).path, configuration: configuration).read { db in
            try UInt64.fetchAll(db, sql: "SELECT epoch FROM epoch ORDER BY rowid")
        }
        #expect(epochs.last == epoch && epochs.dropLast().allSatisfy { $0 < epoch }, "epochs in the log: \(epochs)")
    }
}
