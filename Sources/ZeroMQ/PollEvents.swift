import CZMQ

/// The readiness a ``ZMQPoller`` waits for and reports.
public struct PollEvents: OptionSet, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: Int16
    public init(rawValue: Int16) { self.rawValue = rawValue }

    /// At least one whole message can be received without blocking (`ZMQ_POLLIN`).
    public static let readable = PollEvents(rawValue: Int16(ZMQ_POLLIN))
    /// At least one message can be sent without blocking (`ZMQ_POLLOUT`).
    public static let writable = PollEvents(rawValue: Int16(ZMQ_POLLOUT))
    /// An error condition on a plain file descriptor (`ZMQ_POLLERR`); never set for libzmq sockets.
    public static let error = PollEvents(rawValue: Int16(ZMQ_POLLERR))

    public var description: String {
        let names = [(PollEvents.readable, "readable"), (.writable, "writable"), (.error, "error")]
            .filter { contains($0.0) }.map(\.1)
        return "[\(names.joined(separator: ", "))]"
    }
}
