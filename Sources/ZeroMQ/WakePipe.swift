#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The pipe that wakes an ``IOLoop`` out of its wait when work is queued.
///
/// A plain pipe rather than an `inproc://` PAIR: writing to it is thread-safe without a lock around a ZeroMQ
/// socket, and it keeps working after the context was shut down, so a stopping loop can always be woken.
/// Both ends are non-blocking; the loop writes at most one byte before it drains it again.
package struct WakePipe: Sendable {
    package let readEnd: Int32
    let writeEnd: Int32

    package init() throws(ZMQError) {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else {
            throw ZMQError(errno: systemErrno(), operation: "create the I/O loop's wake-up pipe")
        }
        for end in ends {
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
        readEnd = ends[0]
        writeEnd = ends[1]
    }

    /// Makes the read end readable. A full pipe (`EAGAIN`) already means "awake", so that is fine too.
    package func signal() {
        var byte: UInt8 = 1
        while write(writeEnd, &byte, 1) == -1 && systemErrno() == EINTR {}
    }

    /// Reads whatever is in the pipe, so that it stops being readable.
    package func drain() {
        var buffer = (UInt64(0), UInt64(0))
        while true {
            let count = withUnsafeMutableBytes(of: &buffer) { read(readEnd, $0.baseAddress, $0.count) }
            if count > 0 || (count == -1 && systemErrno() == EINTR) { continue }
            return
        }
    }

    package func close() {
        _ = systemClose(readEnd)
        _ = systemClose(writeEnd)
    }
}

private func systemClose(_ descriptor: Int32) -> Int32 {
    #if canImport(Glibc)
    Glibc.close(descriptor)
    #else
    Darwin.close(descriptor)
    #endif
}
