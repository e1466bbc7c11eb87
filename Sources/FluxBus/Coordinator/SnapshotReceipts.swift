import FluxBusProtocol

/// The STATEs the coordinator is receiving in chunks for its snapshot rounds (docs/PROTOCOL.md, "Transfers"). It
/// holds no state bytes: each chunk goes to the log as it arrives, and only the window and the running checksum stay
/// here. A snapshot is recorded once every byte arrived and the checksum matched; one abandoned leaves the store's
/// previous snapshot as it was.
struct SnapshotReceipts {
    /// What a receipt will record once whole.
    struct Receipt {
        let snapshot: LogSnapshot
        let workerRoutingID: [UInt8]
        var window: TransferWindow
    }

    /// What a CHUNK did.
    enum Progress {
        /// Written; send these PULLs for more.
        case more(LogSnapshot, [Message.Pull])
        /// Every byte arrived and the checksum matched: record it.
        case complete(LogSnapshot)
        /// Refused and abandoned.
        case failed(LogSnapshot, reason: String)
    }

    /// By query id (the transfer id).
    private var receipts: [String: Receipt] = [:]

    var isEmpty: Bool { receipts.isEmpty }

    func receives(_ transfer: String, from routingID: [UInt8]) -> Bool { receipts[transfer]?.workerRoutingID == routingID }

    /// Opens a receipt for a STATE whose inline bytes are not all of it; returns the first PULLs.
    mutating func open(_ state: Message.State, as snapshot: LogSnapshot, from routingID: [UInt8], chunkSize: Int) -> [Message.Pull] {
        var window = TransferWindow(
            transfer: state.requestID, size: state.size, checksum: state.checksum, first: state.state, chunkSize: chunkSize)
        let pulls = window.pulls()
        receipts[state.requestID] = Receipt(snapshot: snapshot, workerRoutingID: routingID, window: window)
        return pulls
    }

    /// Takes a CHUNK the caller checked came from the receipt's worker.
    mutating func accept(_ chunk: Message.Chunk) -> Progress? {
        guard var receipt = receipts.removeValue(forKey: chunk.transfer) else { return nil }
        do {
            try receipt.window.accept(chunk)
        } catch {
            return .failed(receipt.snapshot, reason: error.reason)
        }
        guard receipt.window.isComplete else {
            let pulls = receipt.window.pulls()
            receipts[chunk.transfer] = receipt
            return .more(receipt.snapshot, pulls)
        }
        guard receipt.window.checksumMatches else {
            return .failed(receipt.snapshot, reason: "its reassembled bytes do not match its checksum")
        }
        return .complete(receipt.snapshot)
    }

    /// Abandons one receipt (its sender no longer has it); returns what it was receiving.
    mutating func abandon(_ transfer: String) -> LogSnapshot? { receipts.removeValue(forKey: transfer)?.snapshot }

    /// Abandons every receipt (the round is over); returns what they were receiving.
    mutating func abandonAll() -> [LogSnapshot] {
        defer { receipts.removeAll() }
        return receipts.values.map(\.snapshot).sorted { $0.store < $1.store }
    }
}
