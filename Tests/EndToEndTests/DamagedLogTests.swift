import Foundation
import FluxBus
import FluxBusProtocol
import FluxBusTools
import Testing

/// Issue 14, "a log that is damaged must not start as a bus", from real processes: a coordinator SIGKILLed after it
/// logged, whose log is then emptied, loses its WAL, or has its WAL cut in half, refuses to start (exit 5) with a
/// message naming the file, the reason and the recovery; `--new-bus` starts from what is left on purpose.
@Suite("A damaged log does not start as a bus", .serialized, .timeLimit(.minutes(1)))
struct DamagedLogTests {
    static func data(_ cluster: Cluster) -> URL { cluster.directory.appendingPathComponent("fluxbus-data") }

    /// A coordinator on the default data directory that completes `count` counter.add with request ids, then is
    /// SIGKILLed: everything it logged is in `log.sqlite-wal` (fewer pages than SQLite's auto-checkpoint) or, its last
    /// commits, in `log.journal` only.
    static func killAfterDispatching(_ cluster: Cluster, count: Int) async throws -> Int {
        let coordinator = try DurabilityTests.startCoordinator(cluster, run: 0)
        try cluster.startWorker("w1", stores: ["counter=counter"])
        let client = try await cluster.client()
        try await cluster.waitUntilLive(1, client: client)
        for index in 1...count {
            let result = try await client.dispatch("counter.add", json: #"{"by":1}"#, requestID: "req-\(index)")
            #expect(result.sequence == UInt64(index))
        }
        await client.close()
        kill(coordinator.processIdentifier, SIGKILL)
        coordinator.waitUntilExit()
        await cluster.stop()
        let wal = data(cluster).appendingPathComponent("log.sqlite-wal")
        let size = try #require(try FileManager.default.attributesOfItem(atPath: wal.path)[.size] as? Int)
        #expect(FileManager.default.fileExists(atPath: data(cluster).appendingPathComponent("log.mark").path))
        return size
    }

    /// Starts a coordinator on the damaged directory and expects the refusal.
    static func expectRefusal(_ cluster: Cluster, _ name: String, saying reason: String) async throws {
        let exit = try await DurabilityTests.run(
            cluster, name, DurabilityTests.coordinatorArguments(cluster, name, dataDirectory: data(cluster)))
        let said = "\(name): exit \(exit.status) after \(exit.elapsed)\nstderr: \(exit.error)\nstdout: \(exit.output)"
        #expect(!exit.timedOut && !exit.signaled && exit.status == 5, "\(said)")
        for part in [data(cluster).appendingPathComponent("log.sqlite").path, reason, "--new-bus", "OPERATIONS.md"] {
            #expect(exit.error.contains(part), "stderr does not say \(part): \(said)")
        }
        #expect(!(exit.output + exit.error).contains("coordinator serving"), "\(said)")
    }

    /// `--new-bus` on the same directory serves, from what the log holds.
    static func expectNewBusServes(_ cluster: Cluster, _ name: String, sequence expected: UInt64) async throws {
        try cluster.start(name, DurabilityTests.coordinatorArguments(cluster, name, dataDirectory: data(cluster)) + ["--new-bus"])
        let client = try await BusClient(endpoint: cluster.processes.endpoint("control-\(name)"), timeout: .seconds(5))
        let status = try await client.status()
        #expect(status.sequence == expected, "\(cluster.allLogs())")
        await client.close()
        let statuses = await cluster.stop()
        #expect(statuses[name] == 0, "\(statuses)\n\(cluster.allLogs())")
        #expect(cluster.log(name).contains("--new-bus: going on from what the log holds"), "\(cluster.log(name))")
    }

    @Test func aZeroByteLogIsRefused() async throws {
        let cluster = try Cluster()
        _ = try await Self.killAfterDispatching(cluster, count: 20)
        let directory = Self.data(cluster)
        for name in ["log.sqlite-wal", "log.sqlite-shm"] { try? FileManager.default.removeItem(at: directory.appendingPathComponent(name)) }
        try Data().write(to: directory.appendingPathComponent("log.sqlite"))
        try await Self.expectRefusal(cluster, "empty", saying: "its log is missing or empty")
        // Refused again, not turned into a new bus by the first refusal.
        try await Self.expectRefusal(cluster, "empty-again", saying: "its log is missing or empty")
        try await Self.expectNewBusServes(cluster, "new-bus", sequence: 0)
    }

    @Test func aDeletedWALAfterSIGKILLIsRefused() async throws {
        let cluster = try Cluster()
        let walBytes = try await Self.killAfterDispatching(cluster, count: 40)
        #expect(walBytes > 0, "the WAL was empty: the test would prove nothing")
        let directory = Self.data(cluster)
        for name in ["log.sqlite-wal", "log.sqlite-shm"] { try FileManager.default.removeItem(at: directory.appendingPathComponent(name)) }
        // Even the bus's own record lived in the WAL: the file left is an empty log.
        try await Self.expectRefusal(cluster, "no-wal", saying: "held bus")
        try await Self.expectRefusal(cluster, "no-wal-again", saying: "through #40, but its log is missing or empty")
        try await Self.expectNewBusServes(cluster, "new-bus", sequence: 0)
    }

    @Test func aHalfTruncatedWALAfterSIGKILLIsRefused() async throws {
        let cluster = try Cluster()
        let walBytes = try await Self.killAfterDispatching(cluster, count: 40)
        let wal = Self.data(cluster).appendingPathComponent("log.sqlite-wal")
        let handle = try FileHandle(forWritingTo: wal)
        try handle.truncate(atOffset: UInt64(walBytes / 2))
        try handle.close()
        // The journal beside it could give back what the cut WAL lost (its last commits are there too): it is lost as
        // well, so that nothing can. Where the cut falls decides which refusal says so: a log that ends early, or one
        // with nothing left of the bus; both name the mark's #40.
        try FileManager.default.removeItem(at: Self.data(cluster).appendingPathComponent("log.journal"))
        try await Self.expectRefusal(cluster, "half-wal", saying: "through #40")
        try await Self.expectRefusal(cluster, "half-wal-again", saying: "through #40")
    }

    /// The control: a log that holds what it committed restarts after SIGKILL without a flag.
    @Test func anIntactLogRestartsAfterSIGKILL() async throws {
        let cluster = try Cluster()
        _ = try await Self.killAfterDispatching(cluster, count: 20)
        try cluster.start("again", DurabilityTests.coordinatorArguments(cluster, "again", dataDirectory: Self.data(cluster)))
        let client = try await BusClient(endpoint: cluster.processes.endpoint("control-again"), timeout: .seconds(5))
        // #20's completion may not have been committed when its answer went out: then it is dispatched again.
        let status = try await client.status()
        #expect(status.logLast == 20 && status.sequence >= 19, "\(status)\n\(cluster.allLogs())")
        #expect(!cluster.log("again").contains("created a new bus"), "\(cluster.log("again"))")
        await client.close()
        await cluster.stop()
    }
}
