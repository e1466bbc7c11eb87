import CZMQ

/// The version of the libzmq library this process is linked against.
///
/// ```swift
/// print(ZeroMQVersion.current)  // "4.3.4"
/// ```
public struct ZeroMQVersion: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let major: Int
    public let minor: Int
    public let patch: Int

    /// Creates a version from its three numbers.
    public init(major: Int, minor: Int, patch: Int) {
        self.major = major
        self.minor = minor
        self.patch = patch
    }

    /// Reads the version from the loaded libzmq.
    public static var current: ZeroMQVersion {
        var major: Int32 = 0, minor: Int32 = 0, patch: Int32 = 0
        zmq_version(&major, &minor, &patch)
        return ZeroMQVersion(major: Int(major), minor: Int(minor), patch: Int(patch))
    }

    /// Whether the loaded libzmq was built with the CURVE security mechanism (`zmq_has("curve")`).
    ///
    /// Debian's libzmq has it. Without it, ``CurveKeyPair/generate()`` and the CURVE socket options fail.
    public static var hasCurve: Bool { has("curve") }

    /// Whether the loaded libzmq supports a capability: a transport (`"ipc"`, `"tipc"`), a mechanism (`"curve"`,
    /// `"gssapi"`) or `"draft"` (`zmq_has`).
    public static func has(_ capability: String) -> Bool {
        zmq_has(capability) != 0
    }

    public static func < (lhs: ZeroMQVersion, rhs: ZeroMQVersion) -> Bool {
        (lhs.major, lhs.minor, lhs.patch) < (rhs.major, rhs.minor, rhs.patch)
    }

    public var description: String { "\(major).\(minor).\(patch)" }
}
