import FluxBusProtocol

/// The SNAPSHOTs a joining worker is receiving in chunks (docs/PROTOCOL.md, "Transfers"): each one's window of PULLs
/// and the bytes reassembled so far. A snapshot is handed on only once every byte arrived and the checksum matched;
/// one that fails, or stops arriving, is abandoned and never installed.
struct SnapshotDownloads {
    /// A download nothing arrived for this long is abandoned (the worker then joins again).
    static let idleLimit: Duration = .seconds(5)
    /// Reserve no more than this up front: `size` comes off the wire.
    static let maxReservation = 256 << 20

    private struct Download {
        let header: Message.Snapshot
        var window: TransferWindow
        var bytes: [UInt8]
        var lastProgress: MonotonicTime
    }

    /// What a CHUNK did.
    enum Progress {
        /// More to come: send these PULLs.
        case more([Message.Pull])
        /// Every byte arrived and the checksum matched: the whole snapshot, inline.
        case complete(Message.Snapshot)
        /// The download failed and was abandoned, for this reason.
        case failed(store: String, reason: String)
        /// No download of this transfer is open.
        case unknown
    }

    private var downloads: [String: Download] = [:]

    var isEmpty: Bool { downloads.isEmpty }

    func has(_ transfer: String) -> Bool { downloads[transfer] != nil }

    /// Opens a download for a SNAPSHOT whose `first` bytes are not all of it, replacing one of the same store;
    /// returns the first PULLs.
    mutating func start(_ header: Message.Snapshot, chunkSize: Int, at now: MonotonicTime) -> [Message.Pull] {
        for (transfer, download) in downloads where download.header.store == header.store { downloads[transfer] = nil }
        var window = TransferWindow(
            transfer: header.transfer, size: header.size, checksum: header.checksum, first: header.state, chunkSize: chunkSize)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Int(clamping: min(header.size, UInt64(Self.maxReservation))))
        bytes += header.state
        var stored = header
        stored.state = []
        let pulls = window.pulls()
        downloads[header.transfer] = Download(header: stored, window: window, bytes: bytes, lastProgress: now)
        return pulls
    }

    /// Takes a CHUNK.
    mutating func accept(_ chunk: Message.Chunk, at now: MonotonicTime) -> Progress {
        guard var download = downloads.removeValue(forKey: chunk.transfer) else { return .unknown }
        do {
            try download.window.accept(chunk)
        } catch {
            return .failed(store: download.header.store, reason: error.reason)
        }
        download.bytes += chunk.bytes
        download.lastProgress = now
        guard download.window.isComplete else {
            let pulls = download.window.pulls()
            downloads[chunk.transfer] = download
            return .more(pulls)
        }
        guard download.window.checksumMatches else {
            return .failed(store: download.header.store, reason: "its reassembled bytes do not match its checksum")
        }
        var snapshot = download.header
        snapshot.state = download.bytes
        return .complete(snapshot)
    }

    /// Abandons one download: its sender said it no longer has it.
    mutating func abandon(_ transfer: String) -> String? { downloads.removeValue(forKey: transfer)?.header.store }

    /// Abandons every download (a new HELLO brings the snapshots again).
    mutating func abandonAll() { downloads.removeAll() }

    /// Whether a download has had nothing for ``idleLimit``.
    func isStalled(at now: MonotonicTime) -> Bool {
        downloads.values.contains { now - $0.lastProgress >= Self.idleLimit }
    }
}
