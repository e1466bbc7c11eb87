/// The receiving side of one transfer (docs/PROTOCOL.md, "Transfers"): which PULLs to send so that at most `window`
/// are outstanding, whether a CHUNK is the one expected next, and the running checksum of what arrived.
///
/// Chunks must arrive in offset order: a sender answers PULLs in the order they came, over one connection, each with
/// exactly the bytes asked for. Anything else is an error, and the receiver abandons the transfer.
///
/// ```swift
/// var window = TransferWindow(transfer: "q1", size: 10, checksum: sum, first: [1, 2, 3], chunkSize: 4)
/// let pulls = window.pulls()                       // offsets 3 and 7
/// try window.accept(chunk)                         // in order
/// if window.isComplete, window.checksumMatches { … }
/// ```
public struct TransferWindow: Sendable {
    /// PULLs outstanding at most, by default.
    public static let defaultWindow = 4
    /// The bytes one PULL asks for, by default: 1 MiB.
    public static let defaultChunkSize = 1 << 20

    public let transfer: String
    public let size: UInt64
    public let checksum: UInt64
    /// The bytes received so far, contiguous from offset 0.
    public private(set) var received: UInt64
    /// The offset the next PULL asks from.
    private var requested: UInt64
    private var outstanding = 0
    private var running: UInt64
    private let chunkSize: UInt64
    private let window: Int

    /// Opens the window after the announcing message, whose inline `first` bytes count as received.
    public init(transfer: String, size: UInt64, checksum: UInt64, first: [UInt8], chunkSize: Int = defaultChunkSize,
                window: Int = defaultWindow) {
        self.transfer = transfer
        self.size = size
        self.checksum = checksum
        self.chunkSize = UInt64(max(chunkSize, 1))
        self.window = max(window, 1)
        received = UInt64(first.count)
        requested = received
        running = Self.fnv1a64(first, continuing: StateDigest.offsetBasis)
    }

    /// Whether every byte arrived.
    public var isComplete: Bool { received >= size }
    /// Whether the bytes that arrived hash to the announced checksum (meaningful once complete).
    public var checksumMatches: Bool { running == checksum }

    /// The PULLs to send now to fill the window.
    public mutating func pulls() -> [Message.Pull] {
        var pulls: [Message.Pull] = []
        while outstanding < window, requested < size {
            let count = min(chunkSize, size - requested)
            pulls.append(Message.Pull(transfer: transfer, offset: requested, maxBytes: UInt32(count)))
            requested += count
            outstanding += 1
        }
        return pulls
    }

    /// Takes the next CHUNK.
    /// - Throws: ``Failure`` when it is not the one expected next (wrong offset, empty, past the end, or short).
    public mutating func accept(_ chunk: Message.Chunk) throws(Failure) {
        guard chunk.offset == received else {
            throw Failure(reason: "a CHUNK at offset \(chunk.offset) of transfer `\(transfer)`, expected \(received)")
        }
        let count = UInt64(chunk.bytes.count)
        let expected = min(chunkSize, size - received)
        guard count == expected else {
            throw Failure(reason: "a CHUNK of \(count) bytes at offset \(chunk.offset) of transfer `\(transfer)`, "
                + "expected \(expected)")
        }
        running = Self.fnv1a64(chunk.bytes, continuing: running)
        received += count
        outstanding = max(outstanding - 1, 0)
    }

    /// Why a CHUNK was refused.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public let reason: String
        public var description: String { reason }
    }

    /// FNV-1a 64 continued over `bytes` from `hash`: ``StateDigest/fnv1a64(_:)`` in pieces.
    public static func fnv1a64(_ bytes: some Sequence<UInt8>, continuing hash: UInt64) -> UInt64 {
        var hash = hash
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* StateDigest.prime }
        return hash
    }
}
