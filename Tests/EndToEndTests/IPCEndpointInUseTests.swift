import Foundation
import FluxBus
import FluxBusProtocol
import FluxBusTools
import Testing

/// Two coordinators on the same `ipc://` endpoints: the second used to bind over the first's socket files (libzmq
/// unlinks them) and serve an empty bus to every new client while the first ran on, unreached. It is refused now, as
/// on TCP (exit 2); the files a SIGKILLed coordinator left behind do not stop the next one.
@Suite("A second coordinator on ipc:// endpoints in use", .serialized, .timeLimit(.minutes(1)))
struct IPCEndpointInUseTests {
    static func arguments(_ cluster: Cluster, control: String, publish: String, data: String) -> [String] {
        ["coordinator", "--control", control, "--publish", publish, "--heartbeat-ms", "\(Cluster.heartbeatMilliseconds)",
         "--data-dir", cluster.directory.appendingPathComponent(data).path]
    }

    @Test func aSecondCoordinatorIsRefusedAndTheFirstKeepsItsEndpoints() async throws {
        let cluster = try Cluster()
        let first = try cluster.start("first", Self.arguments(cluster, control: cluster.control, publish: cluster.publish, data: "data-a"))
        let client = try await cluster.client(timeout: .seconds(5))
        let served = try await client.status()
        #expect(served.logPath.contains("data-a"), "\(served.logPath)")
        await client.close()

        // Both endpoints in use, then only the publish one: each refusal names the endpoint it could not take.
        let otherControl = cluster.processes.endpoint("control-other")
        for (name, control, endpoint, flag) in [
            ("second", cluster.control, cluster.control, "--control"),
            ("second-publish", otherControl, cluster.publish, "--publish"),
        ] {
            let exit = try await DurabilityTests.run(
                cluster, name, Self.arguments(cluster, control: control, publish: cluster.publish, data: "data-\(name)"))
            let said = "\(name): exit \(exit.status) after \(exit.elapsed)\nstderr: \(exit.error)\nstdout: \(exit.output)"
            #expect(!exit.timedOut && !exit.signaled && exit.status == 2, "\(said)")
            for part in ["cannot bind", endpoint, "Address already in use", "stop it, or pass another \(flag)"] {
                #expect(exit.error.contains(part), "stderr does not say \(part): \(said)")
            }
            #expect(!(exit.output + exit.error).contains("coordinator serving"), "\(said)")
        }

        // A new client still reaches the first coordinator's bus.
        let later = try await cluster.client(timeout: .seconds(5))
        #expect(try await later.status().logPath == served.logPath, "\(cluster.allLogs())")
        await later.close()

        // SIGKILLed, the first leaves its socket files behind: stale, they do not keep the next one out.
        kill(first.processIdentifier, SIGKILL)
        first.waitUntilExit()
        #expect(FileManager.default.fileExists(atPath: String(cluster.control.dropFirst("ipc://".count))))
        try cluster.start("third", Self.arguments(cluster, control: cluster.control, publish: cluster.publish, data: "data-c"))
        let third = try await cluster.client(timeout: .seconds(5))
        #expect(try await third.status().logPath.contains("data-c"), "\(cluster.allLogs())")
        await third.close()
        let statuses = await cluster.stop()
        #expect(statuses["third"] == 0, "\(statuses)\n\(cluster.allLogs())")
    }
}
