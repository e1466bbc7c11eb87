import Foundation

/// Makes the SQLite log's commits durable by syncing its write-ahead file (`log.sqlite-wal`) itself, so that the
/// coordinator can publish the actions of a commit while the disk syncs (docs/ARCHITECTURE.md, "Publishing while
/// the log syncs").
///
/// SQLite runs at `synchronous = NORMAL`: a commit writes its frames to the WAL and returns, and SQLite syncs only
/// around checkpoints. `fdatasync` of the WAL after a commit then makes it exactly as durable as `FULL` would have,
/// which syncs the same file at the same point, inside the commit.
final class WALSync {
    let path: String
    private var descriptor: Int32 = -1

    init(logPath: String) { path = logPath + "-wal" }

    deinit { if descriptor >= 0 { close(descriptor) } }

    /// Syncs what the commits so far wrote to the WAL.
    /// - Throws: ``BusError`` (`storage`) when the file cannot be opened or synced.
    func sync() throws {
        try openIfNeeded()
        guard fdatasync(descriptor) == 0 else { throw failure("cannot fsync") }
    }

    /// Syncs the WAL if there is one: at start, what a crashed predecessor committed may be only in the page cache.
    func syncIfPresent() throws {
        guard access(path, F_OK) == 0 else { return }
        try sync()
    }

    /// SQLite keeps its WAL while it has the database open and truncates it in place, so one descriptor serves; one
    /// whose file was removed all the same (no links left) is replaced rather than synced in vain.
    private func openIfNeeded() throws {
        if descriptor >= 0 {
            var status = stat()
            if fstat(descriptor, &status) == 0, status.st_nlink > 0 { return }
            close(descriptor)
            descriptor = -1
        }
        descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw failure("cannot open") }
    }

    private func failure(_ what: String) -> BusError {
        BusError(code: .storage, message: "\(what) the log's write-ahead file \(path): \(String(cString: strerror(errno))). "
            + "The coordinator stops rather than answer for what may not be on disk; check the disk, then start it again")
    }
}
