import Dispatch
import Foundation
import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
private let streamSocket = Int32(SOCK_STREAM.rawValue)
#elseif canImport(Darwin)
import Darwin
private let streamSocket = SOCK_STREAM
#endif

/// A small HTTP/1.1 responder for Prometheus: it answers `GET /metrics` and nothing else, one connection at a time, on
/// a thread of its own, and closes every connection after one answer.
///
/// Why not SwiftNIO or Hummingbird: a scrape every 15 s needs no event loop, and their first build costs CI minutes on
/// every run (docs/OPERATIONS.md, "Metrics"). A request is read up to ``maxRequestBytes`` and for at most two
/// seconds, so a slow or hostile client holds the thread no longer than that.
final class MetricsServer: Sendable {
    /// The address and port bound, with port 0 resolved.
    let endpoint: MetricsEndpoint
    private let listener: Int32
    private let render: @Sendable () -> [UInt8]
    private let stopping = Atomic<Bool>(false)
    private let stopped = DispatchSemaphore(value: 0)

    /// The longest request head read; a longer one is answered 431 and closed.
    static let maxRequestBytes = 8192

    /// Binds `endpoint` and starts answering on a new thread.
    /// - Parameter render: the exposition text, made on the server's thread for each scrape.
    /// - Throws: ``BusError`` (`usage`) naming the endpoint when it cannot be bound.
    init(endpoint: MetricsEndpoint, render: @escaping @Sendable () -> [UInt8]) throws {
        let fd = socket(AF_INET, streamSocket, 0)
        guard fd >= 0 else { throw Self.failure(endpoint, "cannot create a socket") }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = endpoint.port.bigEndian
        inet_pton(AF_INET, endpoint.host, &address.sin_addr)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw Self.failure(endpoint, "cannot bind: \(reason)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        self.endpoint = MetricsEndpoint(host: endpoint.host, port: UInt16(bigEndian: address.sin_port))
        self.listener = fd
        self.render = render
        let thread = Thread { [self] in serve() }
        thread.name = "fluxbus-metrics"
        thread.start()
    }

    /// Stops accepting, waits for the thread to finish its connection, and closes the socket.
    func stop() {
        guard !stopping.exchange(true, ordering: .acquiringAndReleasing) else { return }
        stopped.wait()
        close(listener)
    }

    private static func failure(_ endpoint: MetricsEndpoint, _ why: String) -> BusError {
        BusError(code: .usage, message: "--metrics-listen \(endpoint): \(why). Pass a free port on an address of this machine, "
            + "for example 127.0.0.1:9464")
    }

    private func serve() {
        defer { stopped.signal() }
        while !stopping.load(ordering: .acquiring) {
            // Wake up every 200 ms to notice a stop.
            var waiting = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            guard poll(&waiting, 1, 200) > 0 else { continue }
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { continue }
            answer(connection)
            close(connection)
        }
    }

    private func answer(_ connection: Int32) {
        var timeout = timeval(tv_sec: 2, tv_usec: 0)
        setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(connection, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var request: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 2048)
        while !Self.hasEndOfHead(request) {
            guard request.count < Self.maxRequestBytes else {
                respond(connection, HTTPAnswer(status: "431 Request Header Fields Too Large", body: "request too large\n"))
                // Closing with unread bytes would reset the connection and could lose the answer: read on (up to
                // 64 KiB, within the timeout) until the client closes.
                shutdown(connection, Int32(SHUT_WR))
                var drained = 0
                while drained < 65536 {
                    let count = chunk.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
                    guard count > 0 else { break }
                    drained += count
                }
                return
            }
            let count = chunk.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { return }  // closed, timed out or failed: nothing to answer
            request += chunk[..<count]
        }
        respond(connection, HTTPAnswer.to(requestHead: request, metrics: render))
    }

    private static func hasEndOfHead(_ bytes: [UInt8]) -> Bool {
        guard bytes.count >= 4 else { return false }
        for index in 0...(bytes.count - 4) where bytes[index] == 13 && bytes[index + 1] == 10
            && bytes[index + 2] == 13 && bytes[index + 3] == 10 { return true }
        return false
    }

    private func respond(_ connection: Int32, _ answer: HTTPAnswer) {
        let bytes = answer.encoded()
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard count > 0 else { return }
            sent += count
        }
    }
}

extension MetricsServer {
    /// Serves `registry` at `endpoint`, and says where in the log: with a warning when other machines can scrape it.
    static func start(at endpoint: MetricsEndpoint, registry: MetricsRegistry, logger: Logger) throws -> MetricsServer {
        let server = try MetricsServer(endpoint: endpoint, render: registry.render)
        logger.info("serving metrics", metadata: ["metrics": "http://\(server.endpoint)/metrics"])
        if let warning = endpoint.exposureWarning { logger.warning("\(warning)") }
        return server
    }
}
