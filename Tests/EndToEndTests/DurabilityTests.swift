import Foundation
import FluxBus
import FluxBusProtocol
import FluxBusTools
import GRDB
import Synchronization
import Testing

/// The coordinator's durable log under real processes: SIGKILLed coordinators restarted on the same data directory,
/// compaction and snapshots for a replica that joins late, damaged or locked log files, and a backup taken with the
/// sqlite3 CLI while the bus runs.
@Suite("Durability of the coordinator's log", .serialized, .timeLimit(.minutes(5)))
struct DurabilityTests {
    static func digest(ofValue value: Int) -> UInt64 { StateDigest.fnv1a64(Array(#"{"value":\#(value)}"#.utf8)) }

    /// Starts a coordinator under its own log name (`coordinator-RUN`), so that every run's log is kept.
    @discardableResult
    static func startCoordinator(_ cluster: Cluster, run: Int, _ extra: [String] = []) throws -> Process {
        try cluster.start(
            "coordinator-\(run)",
            ["coordinator", "--control", cluster.control, "--publish", cluster.publish, "--heartbeat-ms", "100"] + extra)
    }

    /// The default data directory of a coordinator started in the cluster's directory.
    static func defaultLog(_ cluster: Cluster) -> URL {
        cluster.directory.appendingPathComponent("fluxbus-data/log.sqlite")
    }

    /// Whether a dispatch that failed this way may be sent again with the same request id.
    static func isRetryable(_ error: BusError) -> Bool {
        error.code == .unreachable || error.remoteCode == .shuttingDown || error.remoteCode == .busy
    }

    static func readOnly(_ path: String) throws -> DatabaseQueue {
        var configuration = Configuration()
        configuration.readonly = true
        return try DatabaseQueue(path: path, configuration: configuration)
    }

    // MARK: - 1. Killed coordinator

    struct Acknowledged: Sendable {
        let requestID: String
        let sequence: UInt64
        /// How the RESULT summed up counter: `ok`, or `lost` when no replica acknowledged in time (a replica the
        /// coordinator wrote off, for example when a loaded machine stalls it past the liveness deadline, applies the
        /// dispatch when it catches up); nil when counter is not in it at all.
        let counter: OutcomeStatus?
        let attempts: Int
        /// What the RESULT said, when counter is not `ok` in it.
        let outcomes: [Outcome]
    }

    /// A number several tasks share.
    final class SharedCount: Sendable {
        private let value = Atomic<Int>(0)
        func add(_ amount: Int) { value.add(amount, ordering: .relaxed) }
        var current: Int { value.load(ordering: .relaxed) }
    }

    struct Kill: Sendable {
        let run: Int
        let acknowledgedBefore: Int
    }

    /// The issue's test. Three replicas of `counter`; four clients send 20,000 `counter.add` with their own request
    /// ids, retrying each with the same id until a RESULT comes, while the coordinator is SIGKILLed five times and
    /// restarted on the same endpoints and data directory. Every acknowledged request is in the log exactly once,
    /// completed, and every replica counted each exactly once.
    @Test func aCoordinatorKilledFiveTimesLosesNoAcknowledgedRequestAndAppliesNoneTwice() async throws {
        let total = 20_000
        let clientCount = 4
        let kills = 5
        let began = ContinuousClock.now
        let cluster = try Cluster()
        let firstCoordinator = try Self.startCoordinator(cluster, run: 0)
        for id in ["r1", "r2", "r3"] {
            try cluster.startWorker(id, stores: ["counter=counter"], extra: ["--log-level", "notice"])
        }
        let probe = try await cluster.client(timeout: .seconds(5))
        try await cluster.waitUntilLive(3, client: probe)

        let acknowledgedCount = SharedCount()
        enum Finished: Sendable {
            case client([Acknowledged])
            case killer([Kill])
        }
        var acknowledged: [Acknowledged] = []
        var killed: [Kill] = []
        do {
            try await withThrowingTaskGroup(of: Finished.self) { group in
                for clientNumber in 0..<clientCount {
                    group.addTask {
                        let client = try await cluster.client(timeout: .seconds(2))
                        var acks: [Acknowledged] = []
                        for index in 0..<(total / clientCount) {
                            let requestID = "c\(clientNumber)-\(index)"
                            let giveUp = ContinuousClock.now.advanced(by: .seconds(60))
                            var attempts = 0
                            while true {
                                attempts += 1
                                do {
                                    let result = try await client.dispatch("counter.add", json: #"{"by":1}"#, requestID: requestID)
                                    let counter = result.stores.first { $0.name == "counter" }?.status
                                    acks.append(.init(
                                        requestID: requestID, sequence: result.sequence, counter: counter, attempts: attempts,
                                        outcomes: counter == .ok ? [] : result.outcomes))
                                    acknowledgedCount.add(1)
                                    break
                                } catch let error as BusError where Self.isRetryable(error) && ContinuousClock.now < giveUp {
                                    try await Task.sleep(for: .milliseconds(20))
                                }
                            }
                        }
                        await client.close()
                        return .client(acks)
                    }
                }
                group.addTask {
                    // Spread out: after about a sixth, two sixths… of the requests have been acknowledged.
                    var done: [Kill] = []
                    var coordinator = firstCoordinator
                    for run in 1...kills {
                        let threshold = total * run / (kills + 1) + (run % 2 == 0 ? 250 : -250)
                        let waitUntil = ContinuousClock.now.advanced(by: .seconds(120))
                        while acknowledgedCount.current < threshold, ContinuousClock.now < waitUntil {
                            try await Task.sleep(for: .milliseconds(5))
                        }
                        done.append(.init(run: run - 1, acknowledgedBefore: acknowledgedCount.current))
                        kill(coordinator.processIdentifier, SIGKILL)
                        while coordinator.isRunning { try await Task.sleep(for: .milliseconds(5)) }
                        try await Task.sleep(for: .milliseconds(300))
                        coordinator = try Self.startCoordinator(cluster, run: run)
                    }
                    return .killer(done)
                }
                for try await finished in group {
                    switch finished {
                    case .client(let acks): acknowledged += acks
                    case .killer(let list): killed = list
                    }
                }
            }
        } catch {
            Issue.record("the run failed after \(acknowledgedCount.current) acknowledgements: \(error)\n\(cluster.allLogs())")
            await probe.close()
            await cluster.stop()
            return
        }
        let dispatching = ContinuousClock.now - began

        // The kills happened while clients were sending, and each restarted coordinator resumed from the log.
        #expect(killed.count == kills)
        #expect(killed.allSatisfy { $0.acknowledgedBefore < total }, "a kill came after the clients were done: \(killed)")
        for run in 1...kills {
            #expect(cluster.log("coordinator-\(run)").contains("recovered the log"),
                    "coordinator-\(run) did not resume from the log\n\(cluster.log("coordinator-\(run)").suffix(3000))")
        }

        let acknowledgedIDs = Set(acknowledged.map(\.requestID))
        #expect(acknowledged.count == total)
        #expect(acknowledgedIDs.count == total)
        #expect(Set(acknowledged.map(\.sequence)).count == acknowledged.count, "two requests were answered with one sequence")
        // Counter took part in every dispatch and never failed; `lost` is allowed (see ``Acknowledged/counter``): the
        // replicas' final state below says whether they applied it.
        let unexpected = acknowledged.filter { $0.counter != .ok && $0.counter != .lost }
        #expect(unexpected.isEmpty, "\(unexpected.count) results without counter ok or lost, e.g. \(unexpected.prefix(3))\n\(cluster.allLogs())")
        let lostResults = acknowledged.filter { $0.counter == .lost }
        let retried = acknowledged.filter { $0.attempts > 1 }.count

        // (a) The log: each acknowledged request once, completed, under the sequence its RESULT named.
        // A RESULT is sent as its dispatch completes; the completion is committed with the next group commit (a tick
        // later), so the log is read again until nothing is left uncompleted, for a few seconds at most.
        let logPath = Self.defaultLog(cluster).path
        var rows: [Row] = []
        let logDeadline = ContinuousClock.now.advanced(by: .seconds(5))
        repeat {
            if !rows.isEmpty { try await Task.sleep(for: .milliseconds(100)) }
            rows = try Self.readOnly(logPath).read { db in
                try Row.fetchAll(db, sql: "SELECT sequence, requestID, entry IS NOT NULL AS done FROM action ORDER BY sequence")
            }
        } while rows.contains(where: { !($0["done"] as Bool) }) && ContinuousClock.now < logDeadline
        let uncompleted: [UInt64] = rows.filter { !($0["done"] as Bool) }.map { $0["sequence"] }
        var sequencesByRequest: [String: [UInt64]] = [:]
        var withoutRequestID = 0
        var completedRows = 0
        for row in rows {
            let done: Bool = row["done"]
            if done { completedRows += 1 }
            if let requestID: String = row["requestID"] {
                sequencesByRequest[requestID, default: []].append(row["sequence"])
            } else {
                withoutRequestID += 1
            }
        }
        #expect(withoutRequestID == 0, "\(withoutRequestID) action rows have no request id")
        let notOnce = acknowledged.filter { sequencesByRequest[$0.requestID]?.count != 1 }
        let notOnceExamples = notOnce.prefix(3).map { "\($0.requestID): \(sequencesByRequest[$0.requestID] ?? [])" }
        #expect(notOnce.isEmpty, "\(notOnce.count) acknowledged requests are not in the log exactly once, e.g. \(notOnceExamples)")
        let otherSequence = acknowledged.filter { sequencesByRequest[$0.requestID] != nil && sequencesByRequest[$0.requestID] != [$0.sequence] }
        #expect(otherSequence.isEmpty, "\(otherSequence.count) RESULTs name another sequence than the log, e.g. \(otherSequence.prefix(3))")
        let strangers = Set(sequencesByRequest.keys).subtracting(acknowledgedIDs)
        #expect(strangers.isEmpty, "the log holds request ids no client sent or was answered for: \(Array(strangers.prefix(5)))")
        #expect(completedRows == acknowledgedIDs.count, "\(completedRows) completed actions for \(acknowledgedIDs.count) acknowledged requests")
        #expect(uncompleted.isEmpty, "actions logged and not completed: \(uncompleted.prefix(10)) (the log ends at #\(rows.last.map { $0["sequence"] as UInt64 } ?? 0))")

        // (b), (c) Every replica holds exactly the number of acknowledged requests, all with one digest. A replica
        // that caught up by replay reports its digest with its next acknowledgement: a no-op add refreshes them.
        let expected = Self.digest(ofValue: acknowledgedIDs.count)
        var replicas: [Replica] = []
        let deadline = ContinuousClock.now.advanced(by: .seconds(20))
        var probes = 0
        while ContinuousClock.now < deadline {
            let status = try await probe.status()
            replicas = status.stores.first { $0.name == "counter" }?.replicas ?? []
            if replicas.count == 3, replicas.allSatisfy({ $0.digest == expected && $0.lastApplied == status.sequence }) { break }
            probes += 1
            _ = try? await probe.dispatch("counter.add", json: #"{"by":0}"#, requestID: "probe-\(probes)")
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(replicas.count == 3)
        #expect(Set(replicas.map(\.digest)).count == 1, "replicas disagree: \(replicas)\n\(cluster.allLogs())")
        #expect(replicas.allSatisfy { $0.digest == expected },
                "replicas do not all hold {\"value\":\(acknowledgedIDs.count)}: \(replicas)\n\(cluster.allLogs())")
        let state = try await probe.state(of: "counter")
        #expect(String(decoding: state.state, as: UTF8.self) == #"{"value":\#(acknowledgedIDs.count)}"#)

        await probe.close()
        let statuses = await cluster.stop()
        for name in ["r1", "r2", "r3", "coordinator-\(kills)"] {
            #expect(statuses[name] == 0, "\(name) exited \(statuses[name].map(String.init) ?? "?")\n\(cluster.allLogs())")
        }
        let redispatched = (1...kills).map { run in
            cluster.log("coordinator-\(run)").split(separator: "\n").first { $0.contains("recovered the log") }
                .flatMap { line in line.range(of: "toDispatchAgain=").map { line[$0.upperBound...].prefix { $0.isNumber } } }
                .map(String.init) ?? "?"
        }
        print("durability: \(total) requests, \(kills) coordinator kills at \(killed.map(\.acknowledgedBefore)) acknowledged, "
              + "\(retried) requests retried, \(lostResults.count) results with counter lost (e.g. \(lostResults.first?.outcomes.first?.message ?? "none")), \(redispatched) dispatched again after each restart, \(probes) probes; dispatching took \(dispatching), the whole test \(ContinuousClock.now - began)")
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
         cluster.processes.endpoint("publish-\(name)"), "--heartbeat-ms", "100", "--data-dir", dataDirectory.path]
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
            #expect(exit.elapsed < .seconds(5), "\(said)")
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
    /// dispatches; a coordinator started on the backup holds at least what had completed when the backup began.
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
        #expect(status.sequence >= completedBefore, "the backup holds #\(status.sequence), but #\(completedBefore) had completed when it began\n\(cluster.allLogs())")
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
