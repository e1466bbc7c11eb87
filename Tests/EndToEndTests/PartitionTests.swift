import Foundation
import FluxBus
import FluxBusProtocol
import Testing

/// Two hosts of our own: network namespaces joined by a veth pair, made by the test and removed after it.
struct TwoHosts {
    let coordinatorHost: String
    let workerHost: String
    let coordinatorInterface: String
    let workerInterface: String
    let coordinatorAddress: String

    static let ip = "/usr/sbin/ip"

    /// Whether this machine lets us make network namespaces (root, iproute2, and a kernel that allows it).
    static let available: Bool = {
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: ip) else { return false }
        let probe = "fbprobe\(getpid())"
        guard (try? run(["netns", "add", probe])) != nil else { return false }
        _ = try? run(["netns", "del", probe])
        return true
    }()

    init() throws {
        let tag = String(UInt32.random(in: 0..<UInt32.max), radix: 36)
        let subnet = Int.random(in: 1...250)
        coordinatorHost = "fbc\(tag)"
        workerHost = "fbw\(tag)"
        coordinatorInterface = "vc\(tag)"
        workerInterface = "vw\(tag)"
        coordinatorAddress = "10.233.\(subnet).1"
        try Self.run(["netns", "add", coordinatorHost])
        try Self.run(["netns", "add", workerHost])
        try Self.run(["link", "add", coordinatorInterface, "type", "veth", "peer", "name", workerInterface])
        try Self.run(["link", "set", coordinatorInterface, "netns", coordinatorHost])
        try Self.run(["link", "set", workerInterface, "netns", workerHost])
        try Self.run(["-n", coordinatorHost, "addr", "add", "\(coordinatorAddress)/30", "dev", coordinatorInterface])
        try Self.run(["-n", workerHost, "addr", "add", "10.233.\(subnet).2/30", "dev", workerInterface])
        for (host, interface) in [(coordinatorHost, coordinatorInterface), (workerHost, workerInterface)] {
            try Self.run(["-n", host, "link", "set", "lo", "up"])
            try Self.run(["-n", host, "link", "set", interface, "up"])
        }
    }

    func cutLink() throws { try Self.run(["-n", workerHost, "link", "set", workerInterface, "down"]) }
    func restoreLink() throws { try Self.run(["-n", workerHost, "link", "set", workerInterface, "up"]) }

    func remove() {
        _ = try? Self.run(["netns", "del", workerHost])
        _ = try? Self.run(["netns", "del", coordinatorHost])
    }

    /// `ip netns exec HOST fluxbus ARGUMENTS…`
    func fluxbus(on host: String, _ arguments: [String]) -> [String] {
        ["netns", "exec", host, Cluster.binary.path] + arguments
    }

    @discardableResult
    static func run(_ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: ip)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw ClusterError("ip \(arguments.joined(separator: " ")) failed: \(output)")
        }
        return output
    }
}

@Suite("A partitioned worker", .timeLimit(.minutes(1)))
struct PartitionTests {
    /// The coordinator and two replicas on one host, a third replica on another, over TCP across a veth pair. The
    /// link is cut for longer than the deadline: the bus goes on without the far replica, which is marked lost.
    /// When the link returns, it catches up and ends with every action.
    @Test(.enabled(if: TwoHosts.available, "needs root and iproute2 to create network namespaces; skipped on this machine"))
    func aWorkerCutOffPastItsDeadlineCatchesUpWhenTheLinkReturns() async throws {
        let hosts = try TwoHosts()
        defer { hosts.remove() }
        let cluster = try Cluster()
        let ip = URL(fileURLWithPath: TwoHosts.ip)
        let tcp = "tcp://\(hosts.coordinatorAddress)"
        // A 100 ms heartbeat (a 400 ms deadline), unlike the harness's 250 ms: the far replica must be marked lost
        // well within the 1.5 s cut.
        try cluster.launch("coordinator", executable: ip, arguments: hosts.fluxbus(on: hosts.coordinatorHost, [
            "coordinator", "--control", "\(tcp):7401", "--control", cluster.control, "--publish", "\(tcp):7400",
            "--heartbeat-ms", "100", "--ack-timeout", "1", "--resend-ms", "20",
        ]))
        func journal(_ id: String) -> String { cluster.directory.appendingPathComponent("\(id).journal").path }
        for id in ["near1", "near2"] {
            try cluster.launch(id, executable: ip, arguments: hosts.fluxbus(on: hosts.coordinatorHost, [
                "worker", "--id", id, "--store", "kv=kv", "--coordinator", "\(tcp):7401", "--journal", journal(id),
            ]))
        }
        try cluster.launch("far", executable: ip, arguments: hosts.fluxbus(on: hosts.workerHost, [
            "worker", "--id", "far", "--store", "kv=kv", "--coordinator", "\(tcp):7401", "--journal", journal("far"),
        ]))
        let client = try await cluster.client()
        try await cluster.waitUntilLive(3, client: client)
        var history = KVHistory()
        for index in 1...200 { try await history.dispatch(index, client: client) }

        try hosts.cutLink()
        var index = 201
        let cutUntil = ContinuousClock.now.advanced(by: .milliseconds(1_500))
        while ContinuousClock.now < cutUntil {
            // No dispatch waits on the far replica past the ack timeout (1 s) and a margin.
            try await history.dispatch(index, client: client, timeout: .seconds(5))
            index += 1
        }
        let cut = try await client.status()
        #expect(cut.workers.first { $0.id == "far" }?.state == .lost, "\(cut.workers)")
        try hosts.restoreLink()

        try await history.expectReplicasHold(3, client: client, cluster: cluster)
        await client.close()
        await cluster.stop()
        for id in ["near1", "near2", "far"] {
            try history.expectJournal(URL(fileURLWithPath: journal(id)), of: id)
        }
    }
}
