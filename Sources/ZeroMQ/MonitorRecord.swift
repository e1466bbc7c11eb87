#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One decoded monitor message: the event, its value and the endpoint it concerns.
public struct MonitorRecord: Sendable, Hashable, CustomStringConvertible {
    /// What happened.
    public let event: MonitorEvent
    /// The event's value: a file descriptor, an `errno`, an interval, a ZAP status or a protocol error code.
    public let value: UInt32
    /// The endpoint concerned, such as `tcp://127.0.0.1:41234`.
    public let endpoint: String

    /// Creates a record.
    public init(event: MonitorEvent, value: UInt32, endpoint: String) {
        self.event = event
        self.value = value
        self.endpoint = endpoint
    }

    /// Decodes libzmq's two-frame monitor message: 6 bytes (a 16-bit event number and a 32-bit value, both in the
    /// machine's byte order), then the endpoint.
    ///
    /// - Throws: ``ZMQError`` with `EPROTO` if the frames do not have that shape.
    public init(frames: [[UInt8]]) throws(ZMQError) {
        guard frames.count == 2, frames[0].count == 6 else {
            throw ZMQError(errno: EPROTO, operation: "decode monitor message of \(frames.count) frames "
                + "(expected 2, the first of 6 bytes, got \(frames.map(\.count)))")
        }
        let (event, value) = frames[0].withUnsafeBytes {
            ($0.loadUnaligned(fromByteOffset: 0, as: UInt16.self), $0.loadUnaligned(fromByteOffset: 2, as: UInt32.self))
        }
        self.init(event: MonitorEvent(rawValue: event), value: value,
                  endpoint: String(decoding: frames[1], as: UTF8.self))
    }

    public var description: String { "\(event)(\(value)) \(endpoint)" }
}
