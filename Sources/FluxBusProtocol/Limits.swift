/// Bounds the decoder enforces before it allocates anything.
///
/// Every length on the wire is checked against the bytes that remain in the frame and against
/// these limits, so a hostile or corrupt frame can never make the decoder allocate more than
/// roughly the frame's own size. The defaults suit a coordinator on a trusted network; lower
/// them for exposed endpoints. FluxBus's coordinator sets `ZMQ_MAXMSGSIZE` above ``maxFrameBytes``
/// (twice it), so that a request over these limits reaches it and is answered with an ERROR
/// instead of the connection being cut without a word.
///
/// ```swift
/// let codec = Codec(limits: Limits(maxFrameBytes: 1 << 20, maxBytesField: 512 << 10))
/// ```
public struct Limits: Sendable, Hashable {
    /// The largest body frame (frame 1) accepted, in bytes. Default 16 MiB.
    public var maxFrameBytes: Int
    /// The largest `string` field accepted, in UTF-8 bytes. Default 4096.
    public var maxStringBytes: Int
    /// The largest `bytes` field (payloads, outputs, states) accepted. Default 8 MiB.
    public var maxBytesField: Int
    /// The largest item count of any `list` field accepted. Default 65535, the wire maximum.
    public var maxListCount: Int

    /// The number of frames in every FluxBus message: the signature frame and the body frame.
    public static let maxMessageFrames = 2

    /// The defaults named on each property.
    public static let `default` = Limits()

    /// Limits with the given bounds; every parameter defaults to the value named on its property.
    public init(
        maxFrameBytes: Int = 16 << 20,
        maxStringBytes: Int = 4096,
        maxBytesField: Int = 8 << 20,
        maxListCount: Int = 65535
    ) {
        self.maxFrameBytes = maxFrameBytes
        self.maxStringBytes = maxStringBytes
        self.maxBytesField = maxBytesField
        self.maxListCount = maxListCount
    }

    /// What the wire format can represent at all: the encoder's own bounds.
    package static let representable = Limits(
        maxFrameBytes: .max,
        maxStringBytes: Int(UInt16.max),
        maxBytesField: Int(UInt32.max),
        maxListCount: Int(UInt16.max)
    )
}
