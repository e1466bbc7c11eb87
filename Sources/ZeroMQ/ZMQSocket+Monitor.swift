extension ZMQSocket {
    /// Starts reporting this socket's events to a new ``ZMQMonitor``.
    ///
    /// Start it before binding or connecting to see every event. Events are reported for `tcp://` and `ipc://`
    /// connections, not for `inproc://` ones.
    ///
    /// - Parameter events: The events to report; `nil` reports all of them.
    /// - Throws: ``ZMQError``: `ETERM` after the context shut down, `ENOTSOCK` on a closed socket.
    public func monitor(_ events: [MonitorEvent]? = nil) throws(ZMQError) -> ZMQMonitor {
        try ZMQMonitor(target: self, events: events)
    }
}
