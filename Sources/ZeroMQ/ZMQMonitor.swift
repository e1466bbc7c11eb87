import CZMQ
import Foundation

/// Receives the events of one socket: connections, disconnections, handshakes (`zmq_socket_monitor`).
///
/// libzmq publishes the events on an `inproc://` PAIR; the monitor owns the receiving PAIR, in the same context.
/// Read events with ``receive(timeout:)`` or ``tryReceive()``, or add ``socket`` to a ``ZMQPoller`` or an
/// ``IOLoopScope`` and decode with ``MonitorRecord/init(frames:)``. Like any socket, it belongs to one thread: the
/// one that owns the monitored socket.
///
/// ```swift
/// let monitor = try server.monitor()
/// try server.bind("tcp://127.0.0.1:*")
/// if let record = try monitor.receive(until: { $0.event == .accepted }, timeout: .seconds(5)) {
///     print("a client connected on \(record.endpoint)")
/// }
/// ```
public final class ZMQMonitor {
    /// The PAIR socket events arrive on.
    public let socket: ZMQSocket
    /// The `inproc://` endpoint libzmq publishes on.
    public let endpoint: String
    /// The monitored socket, held weakly so that monitoring never keeps it open.
    private weak var target: ZMQSocket?

    init(target: ZMQSocket, events: [MonitorEvent]?) throws(ZMQError) {
        let mask = events.map { $0.reduce(Int32(0)) { $0 | Int32($1.rawValue) } } ?? ZMQ_EVENT_ALL
        let endpoint = "inproc://zeromq.monitor.\(UUID().uuidString)"
        try target.call("monitor \(target.type) socket on \(endpoint)") { zmq_socket_monitor($0, endpoint, mask) }
        do {
            socket = try ZMQSocket(.pair, context: target.context)
            try socket.connect(endpoint)
        } catch {
            _ = try? target.call("stop monitoring") { zmq_socket_monitor($0, nil, 0) }
            throw error
        }
        self.endpoint = endpoint
        self.target = target
    }

    deinit { close() }

    /// Stops monitoring and closes ``socket``. Calling it again does nothing.
    public func close() {
        if let target, !target.isClosed {
            _ = try? target.call("stop monitoring") { zmq_socket_monitor($0, nil, 0) }
        }
        target = nil
        socket.close()
    }

    /// Returns the next event if one is waiting.
    ///
    /// - Throws: ``ZMQError``: `ETERM` after the context shut down, `EPROTO` for a malformed event.
    public func tryReceive() throws(ZMQError) -> MonitorRecord? {
        try socket.tryReceive().map { frames throws(ZMQError) in try MonitorRecord(frames: frames) }
    }

    /// Waits at most `timeout` for the next event.
    ///
    /// - Returns: The event, or `nil` if none arrived in time.
    /// - Throws: ``ZMQError``: `ETERM` after the context shut down, `EPROTO` for a malformed event.
    public func receive(timeout: Duration) throws(ZMQError) -> MonitorRecord? {
        try socket.receive(timeout: timeout).map { frames throws(ZMQError) in try MonitorRecord(frames: frames) }
    }

    /// Reads events, discarding those that do not match, until one matches or `timeout` passes.
    ///
    /// - Returns: The first matching event, or `nil` if none arrived in time.
    /// - Throws: ``ZMQError``: `ETERM` after the context shut down, `EPROTO` for a malformed event.
    public func receive(until matches: (MonitorRecord) -> Bool, timeout: Duration) throws(ZMQError)
        -> MonitorRecord?
    {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while true {
            let remaining = ContinuousClock.now.duration(to: deadline)
            guard remaining > .zero, let record = try receive(timeout: remaining) else { return nil }
            if matches(record) { return record }
        }
    }
}

@available(*, unavailable)
extension ZMQMonitor: Sendable {}
