#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How an ``IOLoopScope`` waits: one `poll(2)` over each socket's `ZMQ_FD` and the loop's own descriptors, and
/// `ZMQ_EVENTS` asked only of the sockets that can have changed.
///
/// Why not `zmq_poll`: every call asks each of its sockets for `ZMQ_EVENTS` before it waits and again after, and each
/// ask costs libzmq a `getpid` (its fork check) and a `poll` of the socket's mailbox, on top of a first non-blocking
/// `poll` of every descriptor. For a worker's four sockets that is about 11 `poll` and 9 `getpid` per wake-up, most of
/// them for sockets nothing happened to (issue 17).
///
/// `ZMQ_FD` is edge-triggered: it turns readable when a command reaches the socket's mailbox, and any libzmq call on
/// the socket (a send, a receive, `ZMQ_EVENTS` itself) may take that signal while a message stays receivable. So a
/// socket is asked again when its descriptor fired, and whenever it was used since it was last asked
/// (``ZMQSocket/operations`` moved) unless that use was a receive that found nothing (``ZMQSocket/drainedAt``): a
/// socket that was neither can have nothing new to receive.
struct SocketReadiness {
    private struct Watched {
        let socket: ZMQSocket
        /// `socket.operations` just after the last `ZMQ_EVENTS`, which itself counts; `nil` before the first.
        var askedAt: UInt64?
        var fired = false
    }

    private var watched: [Watched] = []
    /// The plain descriptors first, then each watched socket's `ZMQ_FD` in order.
    private var descriptors: [pollfd] = []
    private var plainCount = 0
    /// Where the plain descriptors whose readiness is reported (see ``takeFired()``) start among `descriptors`.
    private var firstReported = 0
    /// Indices among the reported descriptors that the last wait found readable.
    private var firedReported: [Int] = []

    /// Blocking or zero-timeout `poll(2)` calls so far.
    private(set) var waits = 0
    /// `ZMQ_EVENTS` asked so far.
    private(set) var queries = 0

    /// Watches `sockets`, the plain descriptors `plain` (only to be woken by them) and `reported` (whose readiness
    /// ``takeFired()`` tells) from now on.
    ///
    /// - Throws: ``ZMQError`` if a socket's `ZMQ_FD` cannot be read (it is closed, or its context was shut down).
    mutating func watch(plain: [Int32], reported: [Int32] = [], sockets: [ZMQSocket]) throws(ZMQError) {
        descriptors = (plain + reported).map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        firstReported = plain.count
        plainCount = plain.count + reported.count
        firedReported = []
        watched = []
        for socket in sockets {
            let descriptor = try socket.get(.fileDescriptor)
            descriptors.append(pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0))
            watched.append(Watched(socket: socket))
        }
    }

    /// The indices (in the order given to ``watch(plain:sockets:)``) of the sockets that have a message to receive
    /// now. Asks only the sockets whose descriptor fired or that were used since they were last asked.
    ///
    /// - Throws: ``ZMQError``: ``ZMQError/isTerminated`` when the context was shut down, `ENOTSOCK` for a closed
    ///   socket.
    mutating func readable() throws(ZMQError) -> [Int] {
        var ready: [Int] = []
        for index in watched.indices {
            let socket = watched[index].socket
            let unchanged = watched[index].askedAt == socket.operations || socket.drainedAt == socket.operations
            guard watched[index].fired || !unchanged else { continue }
            watched[index].fired = false
            queries += 1
            let events = try socket.get(.events)
            watched[index].askedAt = socket.operations
            if events.contains(.readable) { ready.append(index) }
        }
        return ready
    }

    /// The handler of the socket at `index` ran: ask it again unless its last call was a receive that found nothing.
    /// A handler that left the socket alone would otherwise never be called again for what is still waiting in it
    /// (`ZMQ_FD` does not fire twice for the same message); a level-triggered loop calls it again at once.
    mutating func served(_ index: Int) {
        watched[index].askedAt = nil
    }

    /// The indices (in the order given to ``watch(plain:reported:sockets:)``) of the reported descriptors that waits
    /// found readable since the last call.
    mutating func takeFired() -> [Int] {
        guard !firedReported.isEmpty else { return [] }
        defer { firedReported.removeAll() }
        return firedReported
    }

    /// Waits until a descriptor is readable or `timeout` passes, and notes which sockets' descriptors fired.
    ///
    /// A signal does not end the wait early: it resumes with the time that is left.
    ///
    /// - Parameter timeout: The longest wait; `.zero` only checks; `nil` waits as long as it takes.
    /// - Throws: ``ZMQError`` with the `poll(2)` errno (`ENOMEM`; `EINVAL` past the descriptor limit).
    mutating func wait(timeout: Duration?) throws(ZMQError) {
        waits += 1
        let deadline = timeout.map { ContinuousClock.now.advanced(by: $0) }
        var ready: Int32
        repeat {
            let milliseconds = deadline.map { Int32(clamping: ContinuousClock.now.duration(to: $0).roundedUpMilliseconds) } ?? -1
            ready = descriptors.withUnsafeMutableBufferPointer { poll($0.baseAddress, nfds_t($0.count), milliseconds) }
        } while ready == -1 && systemErrno() == EINTR
        guard ready >= 0 else {
            throw ZMQError(errno: systemErrno(), operation: "poll \(descriptors.count) descriptors of an I/O loop")
        }
        guard ready > 0 else { return }
        for index in firstReported..<plainCount where descriptors[index].revents != 0 {
            firedReported.append(index - firstReported)
        }
        for index in watched.indices where descriptors[plainCount + index].revents != 0 {
            watched[index].fired = true
        }
    }
}
