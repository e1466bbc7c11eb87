import Foundation
import FluxBus
import FluxBusProtocol
import FluxBusTools
import GRDB
import Synchronization
import Testing

/// The coordinator's durable log under real processes: compaction and snapshots for a replica that joins late,
/// damaged or locked log files, and a backup taken with the sqlite3 CLI while the bus runs. A coordinator SIGKILLed
/// under load is ``KilledCoordinatorTests``.
@Suite("Durability of the coordinator's log", .serialized, .timeLimit(.minutes(1)))
struct DurabilityTests {
    static func digest(ofValue value: Int) -> UInt64 { StateDigest.fnv1a64(Array(#"{"value":\#(value)}"#.utf8)) }

    /// Starts a coordinator under its own log name (`coordinator-RUN`), so that every run's log is kept.
    @discardableResult
    static func startCoordinator(_ cluster: Cluster, run: Int, _ extra: [String] = []) throws -> Process {
        try cluster.start(
            "coordinator-\(run)",
            ["coordinator", "--control", cluster.control, "--publish", cluster.publish,
             "--heartbeat-ms", "\(Cluster.heartbeatMilliseconds)"] + extra)
    }

    /// The default data directory of a coordinator started in the cluster's directory.
    static func defaultLog(_ cluster: Cluster) -> URL {
        cluster.directory.appendingPathComponent("fluxbus-data/log.sqlite")
    }

    /// A number several tasks share.
    final class SharedCount: Sendable {
        private let value = Atomic<Int>(0)
        func add(_ amount: Int) { value.add(amount, ordering: .relaxed) }
        var current: Int { value.load(ordering: .relaxed) }
    }

    static func readOnly(_ path: String) throws -> DatabaseQueue {
        var configuration = Configuration()
        configuration.readonly = true
        return try DatabaseQueue(path: path, configuration: configuration)
    }

    // MARK: - 2. Compacted history

    /// Past `--retain`, the coordinator snapshots the live replica and drops what the snapshot covers; a fresh
    /// replica joining after that starts from the snapshot and the tail, and ends equal to the old one.
    @Test func aReplicaJoiningAfterCompactionStartsFromASnapshotAndEqualsTheOldOne() async throws {
        let began = ContinuousClock.now
        let cluster = try Cluster()
        try Self.startCoordinator(cluster, run: 0, ["--retain", "100"])
        try cluster.startWorker("w1", stores: ["counter=counter"])
        let client = try await cluster.client()
        try await cluster.waitUntilLive(1, client: client)
        var failed = 0
        for _ in 0..<1_000 {
            if try await !client.dispatch("counter.add", json: #"{"by":1}"#).succeeded { failed += 1 }
        }
        #expect(failed == 0)

        var status = try await client.status()
        let deadline = ContinuousClock.now.advanced(by: .seconds(20))
        while status.logOldest <= 1, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
            status = try await client.status()
        }
        try #require(status.logOldest > 1, "the log was never compacted: it holds #\(status.logOldest)…#\(status.logLast)\n\(cluster.allLogs())")
        #expect(status.sequence == 1_000)
        let snapshotSequence = try #require(status.stores.first { $0.name == "counter" }).snapshotSequence
        #expect(snapshotSequence >= status.logOldest - 1, "the log starts at #\(status.logOldest) but the snapshot is of #\(snapshotSequence)")
        let (oldestInFile, snapshotsInFile) = try await Self.readOnly(Self.defaultLog(cluster).path).read { db in
            (try Int.fetchOne(db, sql: "SELECT MIN(sequence) FROM action") ?? 0,
             try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM snapshot WHERE store = 'counter'") ?? 0)
        }
        #expect(oldestInFile > 1, "log.sqlite still holds #1")
        #expect(snapshotsInFile == 1)

        try cluster.startWorker("w2", stores: ["counter=counter"])
        try await cluster.waitUntilLive(2, client: client)
        let result = try await client.dispatch("counter.add", json: #"{"by":1}"#)
        let expected = Self.digest(ofValue: 1_001)
        #expect(Set(result.outcomes.map(\.worker)) == ["w1", "w2"], "\(result.outcomes)\n\(cluster.allLogs())")
        #expect(result.outcomes.allSatisfy { $0.status == .ok && $0.digest == expected }, "\(result.outcomes)\n\(cluster.allLogs())")
        let replicas = try #require(try await client.status().stores.first { $0.name == "counter" }).replicas
        #expect(replicas.count == 2 && replicas.allSatisfy { $0.digest == expected && $0.lastApplied == result.sequence }, "\(replicas)")
        #expect(cluster.log("w2").contains("installed a snapshot"), "w2 did not start from a snapshot\n\(cluster.allLogs())")
        #expect(cluster.log("coordinator-0").contains("sent snapshots to a joining worker"))

        // The new replica's own state, with the old one gone: the same JSON.
        let stopped = await cluster.processes.stop(["w1"])
        #expect(stopped["w1"] == 0)
        // Ask once the coordinator has w1's GOODBYE: a STATE_REQUEST it handled first would go to w1, which no longer
        // answers, and fail after the ack timeout with "try again" (a race of two connections, not this test's subject).
        let gone = ContinuousClock.now.advanced(by: .seconds(10))
        while try await client.status().workers.contains(where: { $0.id == "w1" && $0.state == .live }), ContinuousClock.now < gone {
            try await Task.sleep(for: .milliseconds(50))
        }
        let state = try await client.state(of: "counter")
        #expect(String(decoding: state.state, as: UTF8.self) == #"{"value":1001}"#)
        #expect(state.digest == expected)
        await client.close()
        let statuses = await cluster.stop()
        #expect(statuses.values.allSatisfy { $0 == 0 }, "exit statuses \(statuses)\n\(cluster.allLogs())")
        print("durability: compaction test took \(ContinuousClock.now - began)")
    }

    // MARK: - 3. A damaged or locked log

    struct Exit {
        let status: Int32
        let signaled: Bool
        let timedOut: Bool
        let output: String
        let error: String
        let elapsed: Duration
    }

    /// Runs `fluxbus ARGUMENTS…` in the cluster's directory until it exits, SIGKILLing it after `limit`.
    static func run(_ cluster: Cluster, _ name: String, _ arguments: [String], within limit: Duration = .seconds(10)) async throws -> Exit {
        let process = Process()
        process.executableURL = Cluster.binary
        process.arguments = arguments
        process.currentDirectoryURL = cluster.directory
        process.standardInput = FileHandle.nullDevice
        let outputURL = cluster.directory.appendingPathComponent("\(name).stdout")
        let errorURL = cluster.directory.appendingPathComponent("\(name).stderr")
        _ = FileManager.default.createFile(atPath: outputURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errorURL.path, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: outputURL)
        process.standardError = try FileHandle(forWritingTo: errorURL)
        let start = ContinuousClock.now
        try process.run()
        let deadline = start.advanced(by: limit)
        while process.isRunning, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        let timedOut = process.isRunning
        if timedOut { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        return Exit(
            status: process.terminationStatus, signaled: process.terminationReason == .uncaughtSignal, timedOut: timedOut,
            output: (try? String(contentsOf: outputURL, encoding: .utf8)) ?? "",
            error: (try? String(contentsOf: errorURL, encoding: .utf8)) ?? "", elapsed: ContinuousClock.now - start)
    }

    /// A coordinator of its own on `DIRECTORY`, with endpoints named after `name`.
    static func coordinatorArguments(_ cluster: Cluster, _ name: String, dataDirectory: URL) -> [String] {
        ["coordinator", "--control", cluster.processes.endpoint("control-\(name)"), "--publish",
         cluster.processes.endpoint("publish-\(name)"), "--heartbeat-ms", "\(Cluster.heartbeatMilliseconds)", "--data-dir",
         dataDirectory.path]
    }

    @Test func aDamagedLogOrADirectoryInUseStopsTheCoordinatorWithExitFive() async throws {
        let began = ContinuousClock.now
        let cluster = try Cluster()
        try Self.startCoordinator(cluster, run: 0)
        try cluster.startWorker("w1", stores: ["counter=counter"])
        let client = try await cluster.client()
        try await cluster.waitUntilLive(1, client: client)
        for _ in 0..<300 { try await client.dispatch("counter.add", json: #"{"by":1}"#) }
        await client.close()
        let stopped = await cluster.stop()
        #expect(stopped["coordinator-0"] == 0)

        // Fold the WAL into the file, so that damage to the file is damage to the log.
        let original = Self.defaultLog(cluster)
        do {
            let database = try DatabaseQueue(path: original.path)
            _ = try await database.writeWithoutTransaction { try $0.checkpoint(.truncate) }
            try database.close()
        }
        let bytes = try Data(contentsOf: original)
        let page = 4_096
        try #require(bytes.count >= 8 * page, "log.sqlite is only \(bytes.count) bytes")
        let intact = try #require(try await DatabaseQueue(path: original.path).read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM action") })
        #expect(intact == 300)

        func copy(_ name: String, _ damage: (inout Data) -> Void) throws -> URL {
            let directory = cluster.directory.appendingPathComponent("data-\(name)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            var copy = bytes
            damage(&copy)
            try copy.write(to: directory.appendingPathComponent("log.sqlite"))
            return directory
        }
        let middle = bytes.count / 2 / page * page
        let damaged: [(String, URL)] = [
            ("overwritten", try copy("overwritten") { $0.replaceSubrange(middle..<(middle + 2 * page), with: Data(repeating: 0xA5, count: 2 * page)) }),
            ("garbage", try copy("garbage") { data in data = Data((0..<data.count).map { UInt8(truncatingIfNeeded: $0 &* 7_919 &+ 13) }) }),
            ("truncated", try copy("truncated") { $0 = $0.prefix(middle + 100) }),
        ]
        for (name, directory) in damaged {
            let file = directory.appendingPathComponent("log.sqlite").path
            let exit = try await Self.run(cluster, name, Self.coordinatorArguments(cluster, name, dataDirectory: directory))
            let said = "\(name): exit \(exit.status)\(exit.signaled ? " (signal)" : "") after \(exit.elapsed)\nstderr: \(exit.error)\nstdout: \(exit.output)"
            #expect(!exit.timedOut, "\(said)")
            #expect(!exit.signaled, "\(said)")
            #expect(exit.status == 5, "\(said)")
            #expect(exit.error.contains(file), "stderr does not name \(file): \(said)")
            #expect(exit.error.contains("Restore the file from a backup"), "stderr does not say what to do: \(said)")
            #expect(!(exit.output + exit.error).contains("coordinator serving"), "\(said)")
        }

        // The untouched copy serves what it logged; a second coordinator on its directory is turned away.
        let good = try copy("intact") { _ in }
        try cluster.start("intact", Self.coordinatorArguments(cluster, "intact", dataDirectory: good))
        let intactClient = try await BusClient(endpoint: cluster.processes.endpoint("control-intact"), timeout: .seconds(5))
        let intactStatus = try await intactClient.status()
        #expect(intactStatus.sequence == 300, "\(cluster.allLogs())")
        let second = try await Self.run(cluster, "second", Self.coordinatorArguments(cluster, "second", dataDirectory: good))
        let said = "exit \(second.status) after \(second.elapsed)\nstderr: \(second.error)\nstdout: \(second.output)"
        #expect(!second.timedOut && !second.signaled && second.status == 5, "\(said)")
        #expect(second.error.contains("is in use by another coordinator"), "\(said)")
        #expect(second.error.contains(good.path), "\(said)")
        #expect(!(second.output + second.error).contains("coordinator serving"), "\(said)")
        #expect(try await intactClient.status().sequence == 300, "the first coordinator stopped serving\n\(cluster.allLogs())")
        await intactClient.close()
        let statuses = await cluster.stop()
        #expect(statuses["intact"] == 0, "\(cluster.allLogs())")
        print("durability: damage test took \(ContinuousClock.now - began)")
    }

    // MARK: - 4. Backup while running

    /// docs/OPERATIONS.md's backup procedure: `sqlite3 log.sqlite ".backup 'BACKUP/log.sqlite'"` while the bus
    /// dispatches; a coordinator started on the backup holds at least what had completed a few ticks before the backup began.
    @Test func aBackupTakenWithTheSqlite3CLIWhileDispatchingStartsACoordinator() async throws {
        let began = ContinuousClock.now
        let sqlite3 = try #require(
            ["/usr/bin/sqlite3", "/usr/local/bin/sqlite3", "/opt/homebrew/bin/sqlite3"].first { FileManager.default.isExecutableFile(atPath: $0) },
            "the sqlite3 CLI is not installed (`make deps` installs it)")
        let cluster = try Cluster()
        try Self.startCoordinator(cluster, run: 0)
        try cluster.startWorker("w1", stores: ["counter=counter"])
        let client = try await cluster.client()
        try await cluster.waitUntilLive(1, client: client)
        for _ in 0..<200 { try await client.dispatch("counter.add", json: #"{"by":1}"#) }

        let stopDispatching = SharedCount()
        let dispatcher = Task {
            let busy = try await cluster.client()
            var sent = 0
            while stopDispatching.current == 0 {
                try await busy.dispatch("counter.add", json: #"{"by":1}"#)
                sent += 1
            }
            await busy.close()
            return sent
        }
        try await Task.sleep(for: .milliseconds(300))
        let completedBefore = try await client.status().sequence
        // SQLite's tables take the journal's commits at least every tick (50 ms): what had completed a few ticks
        // before the backup began is in them (OPERATIONS.md, section 10).
        try await Task.sleep(for: .milliseconds(200))
        let backup = cluster.directory.appendingPathComponent("backup")
        try FileManager.default.createDirectory(at: backup, withIntermediateDirectories: true)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: sqlite3)
        process.arguments = [Self.defaultLog(cluster).path, ".backup '\(backup.appendingPathComponent("log.sqlite").path)'"]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let errorText = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let completedAfter = try await client.status().sequence
        stopDispatching.add(1)
        let sent = try await dispatcher.value
        #expect(process.terminationStatus == 0, "sqlite3 .backup failed: \(errorText)")
        #expect(sent > 0)
        await client.close()
        let stopped = await cluster.stop()
        #expect(stopped["coordinator-0"] == 0)

        try cluster.start("restored", Self.coordinatorArguments(cluster, "restored", dataDirectory: backup))
        let restored = try await BusClient(endpoint: cluster.processes.endpoint("control-restored"), timeout: .seconds(5))
        let status = try await restored.status()
        // A completion is committed with the next group commit, up to a tick after its RESULT (OPERATIONS.md, section
        // 9), so the last dispatch completed before the backup may be in it as logged, to run again: what the backup
        // must hold is every action completed before it began.
        #expect(status.logLast >= completedBefore, "the backup holds #\(status.logLast), but #\(completedBefore) had completed when it began\n\(cluster.allLogs())")
        #expect(status.sequence + 1 >= completedBefore, "the backup completed #\(status.sequence), #\(completedBefore) before it began")
        #expect(status.sequence <= status.logLast)
        #expect(status.logPath == backup.appendingPathComponent("log.sqlite").path)

        // The restored bus is usable: a fresh replica catches up from it and counts every dispatch it holds.
        try cluster.start("w2", ["worker", "--id", "w2", "--coordinator", cluster.processes.endpoint("control-restored"), "--store", "counter=counter"])
        let probeDeadline = ContinuousClock.now.advanced(by: .seconds(20))
        var result: DispatchResult?
        while result == nil, ContinuousClock.now < probeDeadline {
            result = try? await restored.dispatch("counter.add", json: #"{"by":0}"#, requestID: "probe", timeout: .seconds(2))
        }
        let probe = try #require(result, "the restored coordinator did not complete a dispatch\n\(cluster.allLogs())")
        #expect(probe.succeeded && probe.outcomes.map(\.worker) == ["w2"], "\(probe.outcomes)\n\(cluster.allLogs())")
        let state = try await restored.state(of: "counter")
        #expect(String(decoding: state.state, as: UTF8.self) == #"{"value":\#(probe.sequence - 1)}"#, "\(cluster.allLogs())")
        await restored.close()
        let statuses = await cluster.stop()
        #expect(statuses.values.allSatisfy { $0 == 0 }, "exit statuses \(statuses)\n\(cluster.allLogs())")
        print("durability: backup test took \(ContinuousClock.now - began); completed #\(completedBefore) before the backup, "
              + "#\(completedAfter) after, the backup holds #\(status.sequence)")
    }
}
