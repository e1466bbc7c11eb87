import Foundation
import FluxBusProtocol

#if canImport(Glibc)
import Glibc
#endif

/// A worker's record of what its stores applied: one line per store per dispatch, written as it happens.
///
/// Each line is `SEQUENCE<TAB>STORE<TAB>STATUS<TAB>NANOSECONDS`, the last field read from `CLOCK_MONOTONIC`, which
/// every process on a machine shares; so journals of several workers can be merged into one timeline. Audits and
/// the end-to-end ordering test read it.
final class Journal {
    private let handle: FileHandle

    /// Opens (or creates) the file for appending.
    /// - Throws: ``BusError`` (`usage`) naming the file when it cannot be opened.
    init(path: String) throws {
        if !FileManager.default.fileExists(atPath: path) {
            guard FileManager.default.createFile(atPath: path, contents: nil) else {
                throw BusError(code: .usage, message: "cannot create the journal file \(path); check the directory and its permissions")
            }
        }
        guard let handle = FileHandle(forWritingAtPath: path) else {
            throw BusError(code: .usage, message: "cannot open the journal file \(path) for writing")
        }
        handle.seekToEndOfFile()
        self.handle = handle
    }

    func record(sequence: UInt64, store: String, status: OutcomeStatus) {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let nanos = UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
        handle.write(Data("\(sequence)\t\(store)\t\(status)\t\(nanos)\n".utf8))
    }

    deinit { try? handle.close() }
}
