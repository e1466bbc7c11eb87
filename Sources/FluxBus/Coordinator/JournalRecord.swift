/// One journaled group commit as ``ActionLog`` keeps it until SQLite applies it (``ActionLog/journaled``).
struct JournalRecord {
    var writes: [LogWrite]
    /// The time of the commit, seconds since 1970: the rows' `loggedAt`, `completedAt` and the like.
    var at: Double
    /// Each write's ``LogWrite/encodedBlob(_:)``, in order, as the journal's record holds it: SQLite's rows take these
    /// bytes as they are, so that applying a record encodes no entry or answer a second time.
    var blobs: [[UInt8]]

    /// Each write with its blob, or nil for a write that carries none.
    func forEachWrite(_ body: (LogWrite, [UInt8]?) throws -> Void) rethrows {
        var blobs = blobs.makeIterator()
        for write in writes { try body(write, write.carriesBlob ? blobs.next() : nil) }
    }
}
