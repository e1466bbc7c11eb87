import CZMQ

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Waits until any of several sockets (or plain file descriptors) is readable or writable (`zmq_poll`).
///
/// Add the items once, then call ``poll(timeout:)`` as often as needed; after each call, the subscript tells what
/// each item is ready for. Like its sockets, a poller belongs to one thread.
///
/// ```swift
/// var poller = ZMQPoller()
/// let control = poller.add(router)
/// let actions = poller.add(subscriber)
/// if try poller.poll(timeout: .seconds(1)) > 0 {
///     if poller[control].contains(.readable) { handle(try router.receive()) }
///     if poller[actions].contains(.readable) { apply(try subscriber.receive()) }
/// }
/// ```
public struct ZMQPoller {
    private var items: [zmq_pollitem_t] = []
    /// The socket of each item, or `nil` for a file descriptor; re-read on every poll so a closed socket is caught.
    private var sockets: [ZMQSocket?] = []

    /// Creates an empty poller.
    public init() {}

    /// The number of items added.
    public var count: Int { items.count }

    /// Adds a socket and returns its index.
    @discardableResult
    public mutating func add(_ socket: ZMQSocket, events: PollEvents = .readable) -> Int {
        items.append(zmq_pollitem_t(socket: socket.handle, fd: -1, events: events.rawValue, revents: 0))
        sockets.append(socket)
        return items.count - 1
    }

    /// Adds a plain file descriptor (a pipe, a TCP socket of your own) and returns its index.
    @discardableResult
    public mutating func add(fileDescriptor: Int32, events: PollEvents = .readable) -> Int {
        items.append(zmq_pollitem_t(socket: nil, fd: fileDescriptor, events: events.rawValue, revents: 0))
        sockets.append(nil)
        return items.count - 1
    }

    /// Removes every item.
    public mutating func removeAll() {
        items.removeAll(keepingCapacity: true)
        sockets.removeAll(keepingCapacity: true)
    }

    /// What the item at `index` was found ready for by the last ``poll(timeout:)``.
    public subscript(index: Int) -> PollEvents {
        PollEvents(rawValue: items[index].revents)
    }

    /// The socket added at `index`, or `nil` for a file descriptor.
    public func socket(at index: Int) -> ZMQSocket? { sockets[index] }

    /// Waits until at least one item is ready, or `timeout` passes.
    ///
    /// A signal does not end the wait early: the call resumes with the time that is left.
    ///
    /// - Parameter timeout: The longest wait; `.zero` only checks; `nil` waits as long as it takes.
    /// - Returns: How many items are ready; `0` when the timeout passed.
    /// - Throws: ``ZMQError``: `ETERM` when a socket's context was shut down, `ENOTSOCK` when a socket was closed,
    ///   `EINVAL` for a wait forever on no items at all.
    public mutating func poll(timeout: Duration?) throws(ZMQError) -> Int {
        guard !items.isEmpty || timeout != nil else {
            throw ZMQError(errno: EINVAL, operation: "poll no items without a timeout (it would never return)")
        }
        for index in items.indices {
            items[index].revents = 0
            guard let socket = sockets[index] else { continue }
            guard let handle = socket.handle else {
                throw ZMQError(errno: ENOTSOCK, operation: "poll item \(index): the \(socket.type) socket is closed")
            }
            items[index].socket = handle
        }
        let deadline = timeout.map { ContinuousClock.now.advanced(by: $0) }
        let itemCount = Int32(items.count)
        return Int(try ZMQError.check("poll \(itemCount) items") {
            // Recomputed on each attempt, so a retry after EINTR waits only for the time that is left.
            let milliseconds = deadline.map { ContinuousClock.now.duration(to: $0).roundedUpMilliseconds } ?? -1
            return items.withUnsafeMutableBufferPointer { zmq_poll($0.baseAddress, itemCount, milliseconds) }
        })
    }
}
