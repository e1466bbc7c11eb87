import FluxBusProtocol

/// One journaled group commit as ``ActionLog`` keeps it until SQLite applies it (``ActionLog/journaled``).
struct JournalRecord {
    var writes: [LogWrite]
    /// The time of the commit, seconds since 1970: the rows' `loggedAt`, `completedAt` and the like.
    var at: Double
    /// One per write: its ``LogWrite/encodedBlob(_:)`` as the journal's record holds it, nil for a write without one.
    /// SQLite's rows take these bytes as they are, so that applying a record encodes no entry or answer a second time.
    var blobs: [[UInt8]?]

    /// A commit's writes with their blobs encoded here: one that goes to SQLite without the journal.
    init(encoding writes: [LogWrite], at: Double, codec: Codec) {
        self.init(writes: writes, at: at, blobs: writes.map { $0.encodedBlob(codec) })
    }

    init(writes: [LogWrite], at: Double, blobs: [[UInt8]?]) {
        precondition(blobs.count == writes.count, "a journal record holds one blob or nil per write")
        (self.writes, self.at, self.blobs) = (writes, at, blobs)
    }

    /// Each write with its blob.
    var writesWithBlobs: Zip2Sequence<[LogWrite], [[UInt8]?]> { zip(writes, blobs) }
}
