#if canImport(Glibc)
import Glibc
private let streamSocket = Int32(SOCK_STREAM.rawValue)
#elseif canImport(Darwin)
import Darwin
private let streamSocket = SOCK_STREAM
#endif

/// The socket file of an `ipc://` endpoint, asked whether a process still listens on it before ``ZMQSocket/bind(_:)``
/// binds there.
///
/// libzmq's ipc bind unlinks whatever file is at the path and binds a new one: a second process bound to an endpoint
/// in use takes it over without an error, and new peers reach it while the first goes on running unreached. A TCP bind
/// fails with `EADDRINUSE` instead; this gives `ipc://` the same answer. A file nobody listens on (left by a process
/// that died, since libzmq does not unlink it then) is stale, and libzmq may replace it.
///
/// Two binders starting at the same instant can both find the path free before either binds; the second then still
/// takes the path over. Closing that would need a lock held beside the socket for as long as it is bound.
struct IPCSocketFile {
    let path: String

    /// The path of an `ipc://` endpoint to check; nil for other transports, for `ipc://*` (libzmq makes up a fresh
    /// path) and for Linux's abstract names (`ipc://@name`), which the kernel already refuses to bind twice.
    init?(endpoint: String) {
        let prefix = "ipc://"
        guard endpoint.hasPrefix(prefix) else { return nil }
        let path = String(endpoint.dropFirst(prefix.count))
        guard !path.isEmpty, path != "*", !path.hasPrefix("@") else { return nil }
        self.path = path
    }

    /// Whether a process accepts connections on the file: a plain Unix stream connection to it is accepted. A
    /// refused connection (a stale file), no file, or a path that is not a socket all say no; libzmq's bind then
    /// decides. A full accept queue (`EAGAIN` on the non-blocking connect) means that someone listens.
    var hasListener: Bool {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        // Too long for a socket address: libzmq's bind fails on it with its own error.
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            buffer.copyBytes(from: bytes)
            buffer[bytes.count] = 0
        }
        let probe = socket(AF_UNIX, streamSocket, 0)
        guard probe >= 0 else { return false }
        defer { close(probe) }
        // Non-blocking, so that a listener that does not accept cannot hold the bind up.
        _ = fcntl(probe, F_SETFL, fcntl(probe, F_GETFL) | O_NONBLOCK)
        while true {
            let result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(probe, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
            if result == 0 { return true }
            switch systemErrno() {
            case EINTR: continue
            case EAGAIN, EINPROGRESS: return true
            default: return false
            }
        }
    }

    /// The error a bind on a path in use throws: `EADDRINUSE`, as TCP's, saying what is at the path.
    func inUse(operation: String) -> ZMQError {
        ZMQError(
            errno: EADDRINUSE, operation: operation,
            message: "Address already in use (a process listens on the socket file \(path), which binding would take "
                + "over from it)")
    }
}
