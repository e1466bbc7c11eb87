import Foundation
import Testing
import ZeroMQ

#if canImport(Glibc)
import Glibc
private let streamSocket = Int32(SOCK_STREAM.rawValue)
#elseif canImport(Darwin)
import Darwin
private let streamSocket = SOCK_STREAM
#endif

/// libzmq's ipc bind unlinks the file at the path and binds anew, so a second binder used to take an endpoint in use
/// over from the first without an error. The wrapper refuses that as TCP does (`EADDRINUSE`), and still binds over a
/// stale file that nobody listens on.
@Suite("Binding an ipc:// path", .timeLimit(.minutes(1)))
struct IPCBindTests {
    /// A plain Unix stream socket bound to `path`, listening or not; the caller closes it. Closing it leaves the file,
    /// as a process that dies does.
    static func plainSocket(at path: String, listening: Bool) throws -> Int32 {
        let descriptor = socket(AF_UNIX, streamSocket, 0)
        try #require(descriptor >= 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            buffer.copyBytes(from: bytes)
            buffer[bytes.count] = 0
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        try #require(bound == 0, "bind \(path): errno \(errno)")
        if listening { try #require(listen(descriptor, 4) == 0) }
        return descriptor
    }

    /// Sends one message from a new DEALER to `endpoint` and returns what `server` received, or nil.
    static func roundTrip(to endpoint: String, server: ZMQSocket, context: ZMQContext) throws -> [String]? {
        let client = try ZMQSocket(.dealer, context: context)
        defer { client.close() }
        try client.connect(endpoint)
        try client.send(bytes("ping"))
        return strings(try server.receive(timeout: patience))
    }

    @Test func aSecondBindOnAPathInUseFailsAndTheFirstKeepsIt() async throws {
        let endpoint = uniqueIPCEndpoint()
        defer { removeIPCFile(endpoint) }
        try await onDedicatedThread {
            let context = try ZMQContext()
            let first = try ZMQSocket(.router, context: context)
            try first.bind(endpoint)
            // Another context, as another process would have.
            let otherContext = try ZMQContext()
            let second = try ZMQSocket(.router, context: otherContext)
            let error = try #require(throws: ZMQError.self) { try second.bind(endpoint) }
            #expect(error.code == .addressInUse)
            #expect(error.operation == "bind \(endpoint)")
            #expect(error.description.contains(String(endpoint.dropFirst("ipc://".count))), "\(error)")
            // The path still leads to the first socket: a new peer reaches it.
            let received = try Self.roundTrip(to: endpoint, server: first, context: context)
            #expect(received?.last == "ping")
            second.close()
            first.close()
        }
    }

    /// A listener that is not ZeroMQ at all is in use just the same.
    @Test func aPathAnotherProgramListensOnIsRefused() async throws {
        let endpoint = uniqueIPCEndpoint()
        defer { removeIPCFile(endpoint) }
        let listener = try Self.plainSocket(at: String(endpoint.dropFirst("ipc://".count)), listening: true)
        defer { close(listener) }
        try await onDedicatedThread {
            let socket = try ZMQSocket(.pub, context: try ZMQContext())
            let error = try #require(throws: ZMQError.self) { try socket.bind(endpoint) }
            #expect(error.code == .addressInUse)
        }
    }

    /// A socket file nobody listens on (its process died, or bound and never listened) and a plain file are stale:
    /// the bind replaces them and serves.
    @Test(arguments: ["closed socket", "socket never listening", "regular file"])
    func aStaleFileDoesNotPreventTheBind(_ leftover: String) async throws {
        let endpoint = uniqueIPCEndpoint()
        defer { removeIPCFile(endpoint) }
        let path = String(endpoint.dropFirst("ipc://".count))
        var kept: Int32 = -1
        switch leftover {
        case "closed socket": close(try Self.plainSocket(at: path, listening: true))
        case "socket never listening": kept = try Self.plainSocket(at: path, listening: false)
        default: try Data("left over".utf8).write(to: URL(fileURLWithPath: path))
        }
        defer { if kept >= 0 { close(kept) } }
        #expect(FileManager.default.fileExists(atPath: path), "the test would prove nothing")
        try await onDedicatedThread {
            let context = try ZMQContext()
            let server = try ZMQSocket(.router, context: context)
            try server.bind(endpoint)
            let received = try Self.roundTrip(to: endpoint, server: server, context: context)
            #expect(received?.last == "ping")
            server.close()
        }
    }
}
