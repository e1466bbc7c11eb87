import Foundation
import FluxBus
import FluxBusProtocol
import FluxBusTools
import Testing
import ZeroMQ

@testable import FluxBus

/// CURVE with authorized keys, end to end: keys made by `fluxbus keygen`, a coordinator that admits only the listed
/// ones, and the refusals a user meets.
@Suite("Security", .timeLimit(.minutes(1)))
struct SecurityTests {
    /// A directory of keys: the coordinator's, `w1` (worker), `ops` (client), and `stranger` (not listed).
    struct Keys {
        let directory: URL
        func path(_ file: String) -> String { directory.appendingPathComponent(file).path }

        init(in cluster: Cluster) throws {
            directory = cluster.directory.appendingPathComponent("keys")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            for name in ["coordinator", "w1", "ops", "stranger"] {
                let run = try CommandLineTests.fluxbus(["keygen", name, "--out", directory.path])
                #expect(run.status == 0, "\(run.error)")
            }
            func publicKey(_ name: String) throws -> String { try CurveKeyFiles.loadPublic(path("\(name).pub")) }
            try Data("# listed keys\n\(publicKey("w1")) w1 worker\n\(publicKey("ops")) ops client\n".utf8)
                .write(to: directory.appendingPathComponent("authorized"))
        }

        /// `--curve-server-key … --curve-secret-key NAME.key`
        func client(_ name: String) -> [String] {
            ["--curve-server-key", path("coordinator.pub"), "--curve-secret-key", path("\(name).key")]
        }
    }

    @Test func keygenWritesAPrivateSecretKeyAndNeverOverwrites() throws {
        let cluster = try Cluster()
        let keys = try Keys(in: cluster)
        let secret = try FileManager.default.attributesOfItem(atPath: keys.path("w1.key"))[.posixPermissions] as? Int
        let publicKey = try FileManager.default.attributesOfItem(atPath: keys.path("w1.pub"))[.posixPermissions] as? Int
        #expect(secret == 0o600)
        #expect(publicKey == 0o644)
        let again = try CommandLineTests.fluxbus(["keygen", "w1", "--out", keys.directory.path])
        #expect(again.status == 2)
        #expect(again.error.contains("never overwritten"))
        #expect(try CurveKeyFiles.loadSecret(keys.path("w1.key")).publicKey == CurveKeyFiles.loadPublic(keys.path("w1.pub")))
    }

    @Test func theCoordinatorRefusesToStartWithAnExposedOrMalformedKey() throws {
        let cluster = try Cluster()
        let keys = try Keys(in: cluster)
        let base = ["coordinator", "--control", cluster.control, "--publish", cluster.publish]

        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: keys.path("coordinator.key"))
        let exposed = try CommandLineTests.fluxbus(base + ["--curve-secret-key", keys.path("coordinator.key"), "--authorized-keys", keys.path("authorized")])
        #expect(exposed.status == 2)
        #expect(exposed.error.contains("readable by others"))

        try Data("not a key\n".utf8).write(to: URL(fileURLWithPath: keys.path("broken.key")))
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: keys.path("broken.key"))
        let malformed = try CommandLineTests.fluxbus(base + ["--curve-secret-key", keys.path("broken.key"), "--authorized-keys", keys.path("authorized")])
        #expect(malformed.status == 2)
        #expect(malformed.error.contains("malformed"))

        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: keys.path("coordinator.key"))
        try Data("short-key w9 worker\n".utf8).write(to: URL(fileURLWithPath: keys.path("bad-authorized")))
        let badList = try CommandLineTests.fluxbus(base + ["--curve-secret-key", keys.path("coordinator.key"), "--authorized-keys", keys.path("bad-authorized")])
        #expect(badList.status == 2)
        #expect(badList.error.contains("line 1"))

        let alone = try CommandLineTests.fluxbus(base + ["--curve-secret-key", keys.path("coordinator.key")])
        #expect(alone.status == 2)
        #expect(alone.error.contains("admit anyone"))
    }

    @Test func onlyListedKeysGetInAndAWorkerMustUseTheIDBoundToItsKey() async throws {
        let cluster = try Cluster()
        let keys = try Keys(in: cluster)
        try cluster.startCoordinator(["--curve-secret-key", keys.path("coordinator.key"), "--authorized-keys", keys.path("authorized")])
        try cluster.startWorker("w1", stores: ["counter=counter"], extra: keys.client("w1"))
        let endpoint = ["--coordinator", cluster.control, "--timeout", "5"]
        let ready = try CommandLineTests.fluxbus(["status", "--wait-ready", "1", "--timeout", "20", "--coordinator", cluster.control] + keys.client("ops"))
        #expect(ready.status == 0, "\(ready.error)\n\(cluster.allLogs())")

        let listed = try CommandLineTests.fluxbus(["dispatch", "counter.add", #"{"by":1}"#] + endpoint + keys.client("ops"))
        #expect(listed.status == 0)
        #expect(listed.output.contains("counter   ok      w1"))

        let unlisted = try CommandLineTests.fluxbus(["status"] + endpoint + keys.client("stranger"))
        #expect(unlisted.status == 4)
        #expect(unlisted.error.contains("refused this key"))

        let plainText = try CommandLineTests.fluxbus(["status"] + endpoint)
        #expect(plainText.status == 4)
        #expect(plainText.error.contains("handshake"))

        let workerEndpoint = ["--coordinator", cluster.control]
        let impostor = try CommandLineTests.fluxbus(["worker", "--id", "w2", "--store", "counter=counter"] + workerEndpoint + keys.client("w1"))
        #expect(impostor.status == 4)
        #expect(impostor.error.contains("is not the name its key is bound to (`w1`)"))

        let clientAsWorker = try CommandLineTests.fluxbus(["worker", "--id", "ops", "--store", "counter=counter"] + workerEndpoint + keys.client("ops"))
        #expect(clientAsWorker.status == 4)
        #expect(clientAsWorker.error.contains("client role"))

        let statuses = await cluster.stop()
        #expect(statuses["coordinator"] == 0)
        #expect(cluster.log("coordinator").contains("refused a connection: its key is not authorized"))
    }

    /// With CURVE, another key claiming a worker's routing id cannot take the worker's place: the coordinator turns
    /// ROUTER_HANDOVER off, and what might still arrive under that id from another key is dropped as malformed.
    @Test func anotherKeyCannotSpeakForAWorkerByClaimingItsRoutingID() async throws {
        let cluster = try Cluster()
        let keys = try Keys(in: cluster)
        try cluster.startCoordinator([
            "--log-format", "json", "--curve-secret-key", keys.path("coordinator.key"), "--authorized-keys", keys.path("authorized"),
        ])
        try cluster.startWorker("w1", stores: ["counter=counter"], extra: keys.client("w1"))
        let security = PeerSecurity(
            serverPublicKey: try CurveKeyFiles.loadPublic(keys.path("coordinator.pub")),
            keyPair: try CurveKeyFiles.loadSecret(keys.path("ops.key")))
        let client = try await BusClient(endpoint: cluster.control, timeout: .seconds(5), security: security)
        try await cluster.waitUntilLive(1, client: client)
        let epoch = try await client.status().epoch
        await client.close()

        // The client key `ops` connects with routing id `w1`, then heartbeats and acknowledges in w1's name.
        let endpoint = cluster.control
        let sent = try await Self.onThread { () throws -> Int in
            let context = try ZMQContext()
            let impostor = try ZMQSocket(.dealer, context: context)
            defer { impostor.close() }
            try security.apply(to: impostor)
            try impostor.set(.routingID, to: Array("w1".utf8))
            try impostor.connect(endpoint)
            let ack = Message.ack(.init(epoch: epoch, sequence: 1, results: [StoreResult(store: "counter", status: .ok, digest: 7)]))
            let messages = (0..<5).map { _ in Message.heartbeat(.init(epoch: epoch, sequence: 0)) } + [ack]
            for message in messages {
                try impostor.send(Codec().encode(message))
                Thread.sleep(forTimeInterval: 0.05)
            }
            Thread.sleep(forTimeInterval: 0.5)
            return messages.count
        }

        // The real w1 kept its connection and its place: it is still live and still serves dispatches, and nothing
        // the impostor sent was taken as w1's (no forged acknowledgement, no takeover).
        let after = try await BusClient(endpoint: cluster.control, timeout: .seconds(5), security: security)
        let status = try await after.status()
        #expect(status.workers.map(\.id) == ["w1"] && status.workers.first?.state == .live, "\(status.workers)")
        let result = try await after.dispatch("counter.add", json: #"{"by":1}"#)
        #expect(result.outcomes.map(\.worker) == ["w1"] && result.succeeded)
        await after.close()

        let stopped = await cluster.processes.stop(["coordinator"])
        #expect(stopped["coordinator"] == 0)
        let counts = try #require(cluster.jsonLogLine("coordinator", message: "coordinator stopped"), "\(cluster.allLogs())")
        // Without ROUTER_HANDOVER libzmq refuses the impostor's connection, so its messages never arrive; were one to
        // arrive, it would be dropped as malformed.
        #expect(["0", "\(sent)"].contains(counts["malformed"]), "\(counts)\n\(cluster.allLogs())")
        await cluster.stop()
    }

    /// Runs blocking ZeroMQ calls on a thread of their own, never on the cooperative pool.
    static func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try body() }) }.start()
        }
    }

    @Test func plainTextBeyondLoopbackIsNamed() {
        #expect(Coordinator.reachableBeyondLoopback([
            "tcp://127.0.0.1:7401", "tcp://localhost:7400", "ipc:///tmp/x", "inproc://y", "tcp://[::1]:7402",
            "tcp://10.1.2.3:7401", "tcp://0.0.0.0:7400", "tcp://bus.example:7401",
        ]) == ["tcp://10.1.2.3:7401", "tcp://0.0.0.0:7400", "tcp://bus.example:7401"])
    }

    /// ZMQ_MAXMSGSIZE: a peer sending a message over the bound is disconnected by libzmq before the coordinator
    /// sees a byte of it, and the bus goes on serving everyone else.
    @Test func aMessageOverTheTransportBoundIsNeverDelivered() async throws {
        let cluster = try Cluster()
        try cluster.startCoordinator(["--max-message-bytes", "4096", "--max-payload-bytes", "1000000"])
        try cluster.startWorker("w1", stores: ["kv=kv"])
        let client = try await cluster.client()
        try await cluster.waitUntilLive(1, client: client)
        let big = try CommandLineTests.fluxbus([
            "dispatch", "kv.set", #"{"key":"k","value":"\#(String(repeating: "x", count: 10_000))"}"#,
            "--coordinator", cluster.control, "--timeout", "1",
        ])
        #expect(big.status == 3, "\(big.output)\(big.error)")
        #expect(try await client.dispatch("kv.set", json: #"{"key":"k","value":1}"#).succeeded)
        #expect(String(decoding: try await client.state(of: "kv").state, as: UTF8.self) == #"{"k":1}"#)
        await client.close()
        await cluster.stop()
    }
}
