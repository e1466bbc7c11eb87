import CZMQ

/// The version of the libzmq library this process is linked against.
public struct ZeroMQVersion: Sendable, Hashable, CustomStringConvertible {
    public let major: Int
    public let minor: Int
    public let patch: Int

    /// Reads the version from the loaded libzmq.
    public static var current: ZeroMQVersion {
        var major: Int32 = 0, minor: Int32 = 0, patch: Int32 = 0
        zmq_version(&major, &minor, &patch)
        return ZeroMQVersion(major: Int(major), minor: Int(minor), patch: Int(patch))
    }

    public var description: String { "\(major).\(minor).\(patch)" }
}
