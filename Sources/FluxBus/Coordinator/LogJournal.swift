import Foundation

/// `log.journal`, beside the SQLite log: a group commit on a dispatch's path is appended here as one record, with one
/// `pwrite`, before its ACTIONs are published; SQLite receives the same writes later, many commits in one transaction
/// (``ActionLog``, docs/ARCHITECTURE.md "The journal ahead of SQLite"). A SQLite commit of a lock-step dispatch's five
/// rows cost its coordinator more CPU than all its other log work, on two cores the worker and the client share.
///
/// The file is created full of zeros, ``capacity`` bytes, so that a record overwrites blocks the file already has and
/// its `fdatasync` writes no metadata. Each record starts on a page and fills whole pages (zeros after its body), and
/// the file's cached pages are dropped once it is made and once it is read: a small write into a large folio of the
/// page cache (which writing or reading the file in large pieces makes) dirtied all of it, and each `fdatasync` then
/// wrote the whole megabyte back (`scripts/log-bytes.sh`: 1 MiB written per lock-step dispatch). Records follow each
/// other from the start of the file. A restart begins again at the start under a new *generation*, once SQLite holds
/// every record before it. A record is, little-endian:
///
/// | bytes | field |
/// |---|---|
/// | 4 | magic `FXJ1` |
/// | 4 | body length |
/// | 8 | generation |
/// | 8 | counter: one more than the record before it |
/// | 8 | checksum of the generation, the counter and the body |
/// | n | body: the writes (``JournalWrite``) |
///
/// The log's `journal` table holds the generation and the counter of the last record SQLite holds. Opened again, the
/// log applies the records of that generation after that counter, and stops at the first record that is torn, of
/// another generation, or out of order: what follows it was never written under this generation.
///
/// Only ever used on the coordinator's I/O thread.
final class LogJournal {
    static let fileName = "log.journal"
    static let headerBytes = 32
    /// Records start on, and fill, whole pages of this size.
    static let pageBytes = max(4_096, Int(sysconf(Int32(_SC_PAGESIZE))))
    /// 1 MiB: about 2,500 lock-step dispatches between two restarts, each of which costs SQLite's commit of what the
    /// journal held and an fsync of its WAL.
    static let defaultCapacity = 1 << 20
    private static let magic: UInt32 = 0x314A_5846  // "FXJ1" in the file's byte order

    let path: String
    let capacity: Int
    private let descriptor: Int32
    /// The generation being written, and the counter of the last record written under it.
    private(set) var generation: UInt64 = 0
    private(set) var lastCounter: UInt64 = 0
    /// Where the next record goes.
    private(set) var offset = 0

    /// One record read back.
    struct Record {
        let counter: UInt64
        let body: [UInt8]
    }

    /// Opens the journal in `directory`, creating it full of zeros when it is missing or shorter than `capacity`.
    /// - Throws: ``BusError`` (`storage`) when the file cannot be opened or written.
    init(directory: String, capacity: Int = LogJournal.defaultCapacity) throws {
        path = Self.path(inDirectory: directory)
        self.capacity = capacity
        descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw Self.failure("cannot open", path) }
        do {
            try preallocate()
        } catch {
            close(descriptor)
            throw error
        }
    }

    deinit { close(descriptor) }

    /// Where the journal of the log in `directory` is.
    static func path(inDirectory directory: String) -> String {
        (directory as NSString).appendingPathComponent(fileName)
    }

    /// Fills the file with zeros up to the capacity, once, and makes that durable with its directory entry.
    private func preallocate() throws {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw Self.failure("cannot read the size of", path) }
        guard Int(status.st_size) < capacity else { return }
        let zeros = [UInt8](repeating: 0, count: 1 << 20)
        var at = Int(status.st_size)
        while at < capacity {
            let count = min(zeros.count, capacity - at)
            let written = zeros.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, count, off_t(at)) }
            guard written == count else { throw Self.failure("cannot write", path) }
            at += count
        }
        guard fsync(descriptor) == 0, LogMark.syncDirectory(of: path) else { throw Self.failure("cannot sync", path) }
        dropCachedPages()
    }

    /// Drops the file's pages from the page cache (they are clean): the next record's pages are then cached as small
    /// as it writes them, not as part of a large folio that its `fdatasync` would write whole.
    private func dropCachedPages() {
        _ = posix_fadvise(descriptor, 0, 0, Int32(POSIX_FADV_DONTNEED))
    }

    /// What a record with a body of `count` bytes takes in the file: its header and body, in whole pages.
    static func footprint(_ count: Int) -> Int { (headerBytes + count + pageBytes - 1) / pageBytes * pageBytes }

    // MARK: - Reading back

    /// The records of `generation` after `counter`, in order, as far as they follow each other from the file's start.
    /// - Throws: ``BusError`` (`storage`) when the file cannot be read.
    func records(of generation: UInt64, after counter: UInt64) throws -> [Record] {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw Self.failure("cannot read the size of", path) }
        var bytes = [UInt8](repeating: 0, count: Int(status.st_size))
        let read = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        guard read == bytes.count else { throw Self.failure("cannot read", path) }
        dropCachedPages()
        return bytes.withUnsafeBytes { file in
            var records: [Record] = []
            var at = 0
            var previous: UInt64?
            while let (record, end) = Self.record(in: file, at: at, generation: generation) {
                if let previous, record.counter != previous + 1 { break }
                previous = record.counter
                if record.counter > counter { records.append(record) }
                at = end
            }
            // Only a run that continues from what SQLite holds applies: after a gap, nothing does.
            guard let first = records.first, first.counter == counter + 1 else { return [] }
            return records
        }
    }

    /// The record at `at` when it is whole and of `generation`, and where the next one starts.
    private static func record(in file: UnsafeRawBufferPointer, at: Int, generation: UInt64) -> (Record, Int)? {
        guard at + headerBytes <= file.count,
            UInt32(littleEndian: file.loadUnaligned(fromByteOffset: at, as: UInt32.self)) == magic
        else { return nil }
        let length = Int(UInt32(littleEndian: file.loadUnaligned(fromByteOffset: at + 4, as: UInt32.self)))
        let recordGeneration = UInt64(littleEndian: file.loadUnaligned(fromByteOffset: at + 8, as: UInt64.self))
        let counter = UInt64(littleEndian: file.loadUnaligned(fromByteOffset: at + 16, as: UInt64.self))
        let checksum = UInt64(littleEndian: file.loadUnaligned(fromByteOffset: at + 24, as: UInt64.self))
        let start = at + headerBytes
        guard recordGeneration == generation, length <= file.count - start else { return nil }
        let body = UnsafeRawBufferPointer(rebasing: file[start..<start + length])
        guard Self.checksum(generation: generation, counter: counter, body: body) == checksum else { return nil }
        return (Record(counter: counter, body: Array(body)), at + footprint(length))
    }

    // MARK: - Writing

    /// Writes from the start of the file again, under `generation`, the next record counting on from `counter`. The
    /// log calls it once SQLite holds, durably, every record written so far.
    func restart(generation: UInt64, after counter: UInt64) {
        self.generation = generation
        lastCounter = counter
        offset = 0
    }

    /// Whether a record with a body of `count` bytes fits after those written since the restart.
    func fits(_ count: Int) -> Bool { offset + Self.footprint(count) <= capacity }

    /// Appends one record, with one `pwrite`, and returns its counter. The page cache holds it from then on, which a
    /// killed process does not lose; ``sync()`` makes it survive a power cut.
    /// - Throws: ``BusError`` (`storage`) when it cannot be written whole.
    func append(_ body: [UInt8]) throws -> UInt64 {
        precondition(fits(body.count), "the log checks that a record fits before appending it")
        let counter = lastCounter + 1
        var header = [UInt8](repeating: 0, count: Self.headerBytes)
        header.withUnsafeMutableBytes { bytes in
            bytes.storeBytes(of: Self.magic.littleEndian, toByteOffset: 0, as: UInt32.self)
            bytes.storeBytes(of: UInt32(body.count).littleEndian, toByteOffset: 4, as: UInt32.self)
            bytes.storeBytes(of: generation.littleEndian, toByteOffset: 8, as: UInt64.self)
            bytes.storeBytes(of: counter.littleEndian, toByteOffset: 16, as: UInt64.self)
            let checksum = body.withUnsafeBytes { Self.checksum(generation: generation, counter: counter, body: $0) }
            bytes.storeBytes(of: checksum.littleEndian, toByteOffset: 24, as: UInt64.self)
        }
        // One system call for the header, the body and the zeros that fill its last page, none of them copied.
        let footprint = Self.footprint(body.count)
        let padding = footprint - Self.headerBytes - body.count
        let written = header.withUnsafeBytes { header in
            body.withUnsafeBytes { body in
                Self.zeroPage.withUnsafeBytes { zeros in
                    var pieces = [
                        iovec(iov_base: UnsafeMutableRawPointer(mutating: header.baseAddress), iov_len: header.count),
                        iovec(iov_base: UnsafeMutableRawPointer(mutating: body.baseAddress), iov_len: body.count),
                        iovec(iov_base: UnsafeMutableRawPointer(mutating: zeros.baseAddress), iov_len: padding),
                    ]
                    return pwritev(descriptor, &pieces, Int32(pieces.count), off_t(offset))
                }
            }
        }
        guard written == footprint else { throw Self.failure("cannot write", path) }
        offset += footprint
        lastCounter = counter
        return counter
    }

    /// The zeros after a record's body, up to its page's end.
    private static let zeroPage = [UInt8](repeating: 0, count: pageBytes)

    /// Makes every record written so far survive a power cut.
    /// - Throws: ``BusError`` (`storage`) when the disk cannot sync.
    func sync() throws {
        guard fdatasync(descriptor) == 0 else { throw Self.failure("cannot fsync", path) }
    }

    /// A check of a record against a torn or stale write (not against tampering): a multiply-xorshift over its fields
    /// and its body, eight bytes at a time.
    static func checksum(generation: UInt64, counter: UInt64, body: UnsafeRawBufferPointer) -> UInt64 {
        var hash: UInt64 = 0x9E37_79B9_7F4A_7C15 ^ UInt64(body.count)
        func mix(_ word: UInt64) {
            hash = (hash ^ word) &* 0xFF51_AFD7_ED55_8CCD
            hash ^= hash >> 29
        }
        mix(generation)
        mix(counter)
        var at = 0
        while at + 8 <= body.count {
            mix(UInt64(littleEndian: body.loadUnaligned(fromByteOffset: at, as: UInt64.self)))
            at += 8
        }
        var tail: UInt64 = 0
        for index in at..<body.count { tail |= UInt64(body[index]) << (8 * UInt64(index - at)) }
        mix(tail)
        return hash
    }

    private static func failure(_ what: String, _ path: String) -> BusError {
        BusError(code: .storage, message: "\(what) the log's journal \(path): \(String(cString: strerror(errno))). "
            + "The coordinator stops rather than publish what it could not log; check the disk (space, permissions, "
            + "errors in the system log), then start it again: it resumes from what was written")
    }
}
