import FluxBusProtocol

/// An error from the bus: the coordinator refused, could not be reached, or answered something unexpected.
public struct BusError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of failure this is. Each maps to one of the CLI's exit codes.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let description: String
        /// No answer in time: the coordinator is down, unreachable, or overloaded; or it stopped (ERROR code 7) with
        /// the request's outcome unknown (exit code 3). Retry with the same request id.
        public static let unreachable = Code(description: "unreachable")
        /// The coordinator refused: busy, unauthorized, unknown store, invalid graph… (exit code 4).
        public static let refused = Code(description: "refused")
        /// The peer broke the protocol (exit code 3).
        public static let protocolViolation = Code(description: "protocol violation")
        /// A local problem: a bad argument or configuration, or a request over the protocol's size limits, refused
        /// before it is sent (exit code 2).
        public static let usage = Code(description: "usage")
        /// A replica here (a watcher's) does not end as the bus's replicas did: its store type behaves otherwise than
        /// the workers', so its state would be wrong (exit code 3).
        public static let diverged = Code(description: "diverged")
        /// The coordinator's log cannot be opened, read or written (exit code 5).
        public static let storage = Code(description: "storage")
    }

    /// What kind of failure this is.
    public let code: Code
    /// What failed, with what input, and what to do about it.
    public let message: String
    /// The coordinator's error code, when it sent one.
    public let remoteCode: Message.Error.Code?

    public init(code: Code, message: String, remoteCode: Message.Error.Code? = nil) {
        self.code = code
        self.message = message
        self.remoteCode = remoteCode
    }

    public var description: String { message }
}
