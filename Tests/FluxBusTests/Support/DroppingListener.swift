import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A Unix socket listener that accepts each connection and closes it at once, on a thread of its own: what a peer
/// sees when the coordinator dies between accepting and completing the ZMTP handshake (or crash-loops).
final class DroppingListener: Sendable {
    /// A fresh directory under /tmp, short enough for a socket path, for `ipc://` endpoints.
    static func temporaryDirectory() throws -> String {
        let path = "/tmp/fluxbus-drop-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    let path: String
    /// `ipc://` + ``path``.
    var endpoint: String { "ipc://\(path)" }
    private let state = Mutex((dropped: 0, stopping: false))
    private let stopped = DispatchSemaphore(value: 0)

    /// Listens on `path` (replacing a file left there) until ``stop()``.
    init(path: String) throws {
        self.path = path
        unlink(path)
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            buffer.copyBytes(from: Array(path.utf8.prefix(buffer.count - 1)) + [0])
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, listen(descriptor, 16) == 0 else {
            let code = errno
            close(descriptor)
            throw POSIXError(.init(rawValue: code) ?? .EIO)
        }
        Thread { [self] in
            var poller = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)]
            while !state.withLock({ $0.stopping }) {
                // A short poll so that stop() is noticed; this is a loop's tick, not a wait anything depends on.
                guard poll(&poller, 1, 10) > 0 else { continue }
                let connection = accept(descriptor, nil, nil)
                if connection >= 0 {
                    close(connection)
                    state.withLock { $0.dropped += 1 }
                }
            }
            close(descriptor)
            unlink(path)
            stopped.signal()
        }.start()
    }

    /// How many connections it has accepted and dropped so far.
    var dropped: Int { state.withLock { $0.dropped } }

    /// Stops listening and removes the socket file; returns once both are done.
    func stop() {
        state.withLock { $0.stopping = true }
        stopped.wait()
    }

    /// Waits (off the cooperative pool) until at least `count` connections were dropped; false if that took longer
    /// than `patience`.
    func waitUntilDropped(_ count: Int, patience: Duration = .seconds(20)) async -> Bool {
        let deadline = ContinuousClock.now.advanced(by: patience)
        while dropped < count {
            guard ContinuousClock.now < deadline else { return false }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return true
    }
}
