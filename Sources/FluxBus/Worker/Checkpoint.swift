import Foundation
import FluxBusProtocol

#if canImport(Glibc)
import Glibc
#endif

/// What a worker keeps on disk to resume from (`--data-dir`): its stores' states, the sequence they include, and
/// the results of its last applied sequences, to re-acknowledge a dispatch the coordinator sends again.
///
/// JSON, with a format version. Written only between dispatches, so the states are exactly those after
/// `lastApplied`, except a store a SNAPSHOT brought further, whose `appliedThrough` says how far.
struct Checkpoint: Codable, Equatable, Sendable {
    /// The format this code writes and reads.
    static let currentFormat = 1

    struct StoreState: Codable, Equatable, Sendable {
        var name: String
        /// Set when a snapshot brought the store beyond `lastApplied`.
        var appliedThrough: UInt64?
        /// FNV-1a 64 of `state`, to catch a damaged file before it becomes a replica's state.
        var digest: UInt64
        var state: Data
    }

    struct Result: Codable, Equatable, Sendable {
        var store: String
        var status: UInt8
        var message: String
        var output: Data?
        var digest: UInt64
        /// What the store read of its dependencies (``StoreResult/readDigest``); absent in a checkpoint written
        /// before it existed, and for a store that waits for none.
        var readDigest: UInt64?
    }

    struct Acknowledged: Codable, Equatable, Sendable {
        var sequence: UInt64
        var results: [Result]
    }

    var format = Checkpoint.currentFormat
    var worker: String
    var lastApplied: UInt64
    /// The log chain at `lastApplied`; absent when unknown (after a snapshot, or in a checkpoint from before chains).
    var chain: UInt64?
    /// The epoch the entry at `lastApplied` came from; absent when unknown (in a checkpoint from before version 7).
    var appliedEpoch: UInt64? = nil
    var stores: [StoreState]
    var acknowledged: [Acknowledged]
}

extension Checkpoint.Result {
    init(_ result: StoreResult) {
        self.init(
            store: result.store, status: result.status.rawValue, message: result.message, output: result.output.map { Data($0) },
            digest: result.digest, readDigest: result.readDigest == ReadDigest.none ? nil : result.readDigest)
    }

    /// The result as the wire carries it; nil for an unknown status.
    var storeResult: StoreResult? {
        OutcomeStatus(rawValue: status).map {
            StoreResult(
                store: store, status: $0, message: message, output: output.map { [UInt8]($0) }, digest: digest,
                readDigest: readDigest ?? ReadDigest.none)
        }
    }
}

/// The checkpoint file of one worker: `DIRECTORY/WORKER.checkpoint`, replaced atomically (a temporary file, fsync,
/// rename, fsync of the directory), so that a crash leaves the old checkpoint or the new one, never a torn one.
struct CheckpointFile {
    let directory: String
    let path: String

    init(directory: String, worker: String) {
        self.directory = directory
        self.path = (directory as NSString).appendingPathComponent("\(worker).checkpoint")
    }

    /// What an operator can do about a checkpoint this worker cannot use.
    var remedy: String {
        "move it aside (for example `mv \(path) \(path).bad`) to start this worker empty; it then catches up from the coordinator"
    }

    /// Creates the directory if needed.
    /// - Throws: ``BusError`` (`usage`) naming the directory.
    func prepare() throws(BusError) {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw BusError(code: .usage, message: "cannot create the data directory \(directory): \(error.localizedDescription); check the path and its permissions")
        }
    }

    /// Reads the checkpoint; nil if there is none yet.
    /// - Throws: ``BusError`` (`usage`) naming the file when it cannot be read, does not decode, or is of another format.
    func load() throws(BusError) -> Checkpoint? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw BusError(code: .usage, message: "cannot read the checkpoint \(path); check its permissions, or \(remedy)")
        }
        // The format first, so that a newer format is named as such rather than called corrupt.
        struct Header: Decodable { var format: Int }
        guard let header = try? JSONDecoder().decode(Header.self, from: data) else {
            throw BusError(code: .usage, message: "the checkpoint \(path) is corrupt (not a FluxBus checkpoint); \(remedy)")
        }
        guard header.format == Checkpoint.currentFormat else {
            throw BusError(code: .usage, message: "the checkpoint \(path) is in format \(header.format), but this fluxbus reads format \(Checkpoint.currentFormat); run a matching fluxbus, or \(remedy)")
        }
        do {
            return try JSONDecoder().decode(Checkpoint.self, from: data)
        } catch {
            throw BusError(code: .usage, message: "the checkpoint \(path) is corrupt (\(error)); \(remedy)")
        }
    }

    /// Replaces the checkpoint with `checkpoint`, durably.
    /// - Throws: ``BusError`` (`usage`) naming the file and the call that failed.
    func write(_ checkpoint: Checkpoint) throws(BusError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data: Data
        do { data = try encoder.encode(checkpoint) } catch {
            throw BusError(code: .usage, message: "cannot encode the checkpoint for \(path): \(error)")
        }
        let temporary = path + ".tmp"
        // A write that failed (a full disk) leaves nothing behind: a checkpoint's worth of space back for the next try.
        do { try writeSynced(data, to: temporary) } catch {
            unlink(temporary)
            throw error
        }
        guard rename(temporary, path) == 0 else {
            let error = failure("rename \(temporary) to", path)
            unlink(temporary)
            throw error
        }
        // The rename is durable only once the directory is.
        let directoryDescriptor = open(directory, O_RDONLY | O_DIRECTORY)
        guard directoryDescriptor >= 0 else { throw failure("open the directory", directory) }
        defer { close(directoryDescriptor) }
        guard fsync(directoryDescriptor) == 0 else { throw failure("fsync the directory", directory) }
    }

    private func writeSynced(_ data: Data, to file: String) throws(BusError) {
        let descriptor = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard descriptor >= 0 else { throw failure("create", file) }
        defer { close(descriptor) }
        let written = data.withUnsafeBytes { buffer -> Bool in
            var offset = 0
            while offset < buffer.count {
                let count = Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if count < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                offset += count
            }
            return true
        }
        guard written else { throw failure("write", file) }
        guard fsync(descriptor) == 0 else { throw failure("fsync", file) }
    }

    private func failure(_ operation: String, _ file: String) -> BusError {
        BusError(code: .usage, message: "cannot \(operation) \(file): \(String(cString: strerror(errno))); check the disk and the permissions of \(directory)")
    }
}
