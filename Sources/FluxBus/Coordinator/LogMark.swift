import Foundation
import FluxBusProtocol

/// The file `log.mark` beside the log: the bus id, and the last sequence the log committed with its chain value.
///
/// Created whole and fsynced with the log (a temporary file renamed over it, ``create(_:)``), then rewritten in place
/// (one `pwrite` of a fixed-size record) after every commit that logged an action, without fsync: the page cache
/// survives a SIGKILL, and with `--sync always` the log's own fsync comes first, so the mark never claims more than
/// the log holds on disk. With `--sync batch` or `off` a power loss may leave the mark ahead of the log, which then
/// refuses to start: it did lose what the mark names (docs/OPERATIONS.md, section 9).
///
/// The record is one line of text, always 110 bytes:
/// `fluxbus-log-mark v1 bus=<32 hex> sequence=<20 digits> chain=<16 hex>\n`. Since no crash leaves the file empty
/// or short, a file that is not exactly one record is damage, refused like any other (``LogMarkDamage``).
final class LogMark: LogMarkStore {
    static let fileName = "log.mark"
    /// The size of every record ``record(_:)`` makes.
    static let recordBytes = 110
    let path: String
    /// The open file; -1 while there is none (a new data directory), until ``write(_:durably:)`` creates it.
    private var descriptor: Int32 = -1

    /// Opens the mark in `directory` if there is one; a missing file is created by the first ``write(_:durably:)``.
    /// - Throws: ``BusError`` (`storage`) when the file exists and cannot be opened.
    init(directory: String) throws {
        path = (directory as NSString).appendingPathComponent(Self.fileName)
        try openExisting()
    }

    deinit { if descriptor >= 0 { close(descriptor) } }

    private func openExisting() throws {
        let opened = open(path, O_RDWR | O_CLOEXEC)
        guard opened >= 0 else {
            guard errno == ENOENT else { throw Self.failure("cannot open", path) }
            return
        }
        descriptor = opened
    }

    /// What the file says; nil when there is none (a new data directory, or one from before marks).
    /// - Throws: ``LogMarkDamage`` when it holds anything but one whole mark: nothing, a part of one, or something
    ///   else; ``BusError`` (`storage`) when it cannot be read.
    func read() throws -> LogHighWater? {
        if descriptor < 0 { try openExisting() }
        guard descriptor >= 0 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 256)
        let count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        guard count >= 0 else { throw Self.failure("cannot read", path) }
        guard count == Self.recordBytes, let mark = Self.parse(String(decoding: buffer.prefix(count), as: UTF8.self)) else {
            throw LogMarkDamage(path: path, bytes: count)
        }
        return mark
    }

    /// Rewrites the record in place; `durably` also fsyncs the file and the directory (when a bus is created). A
    /// data directory without a mark gets one through ``create(_:)``, durably whatever `durably` says.
    func write(_ mark: LogHighWater, durably: Bool) throws {
        let record = Self.record(mark)
        guard descriptor >= 0 else { return try create(record) }
        let written = record.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
        guard written == record.count, !durably || (fsync(descriptor) == 0 && Self.syncDirectory(of: path)) else {
            throw Self.failure("cannot write", path)
        }
    }

    /// Creates the file with its first record: written to a temporary file, fsynced, renamed over the mark's path,
    /// then the directory fsynced. A crash leaves no mark or a whole one, never an empty or a short file, which
    /// would otherwise be indistinguishable from a mark that was damaged after it named what the log committed.
    private func create(_ record: [UInt8]) throws {
        let temporary = path + ".new"
        // Only the coordinator holding the directory's lock gets here, so the name is never in use; one left by a
        // crash is truncated.
        let file = open(temporary, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard file >= 0 else { throw Self.failure("cannot create", temporary) }
        let written = record.withUnsafeBytes { pwrite(file, $0.baseAddress, $0.count, 0) }
        guard written == record.count, fsync(file) == 0, rename(temporary, path) == 0, Self.syncDirectory(of: path) else {
            let failure = Self.failure("cannot create", path)
            close(file)
            unlink(temporary)
            throw failure
        }
        // Renamed, the temporary file is the mark: later records go to it in place.
        descriptor = file
    }

    /// A storage error for a call on the file that failed, with `errno`'s text.
    private static func failure(_ what: String, _ path: String) -> BusError {
        BusError(code: .storage, message: "\(what) \(path): \(String(cString: strerror(errno))). "
            + "Check the data directory (disk space, permissions), then start the coordinator again")
    }

    /// The record's bytes, written digit by digit: it is rewritten after every commit, where formatting it as a
    /// string cost more than the `pwrite`.
    static func record(_ mark: LogHighWater) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(110)
        bytes.append(contentsOf: "fluxbus-log-mark v1 bus=".utf8)
        bytes.append(contentsOf: mark.busID.utf8)
        bytes.append(contentsOf: " sequence=".utf8)
        appendDigits(of: mark.sequence, width: 20, radix: 10, to: &bytes)
        bytes.append(contentsOf: " chain=".utf8)
        appendDigits(of: mark.chain, width: 16, radix: 16, to: &bytes)
        bytes.append(UInt8(ascii: "\n"))
        return bytes
    }

    /// `value` in lowercase digits of `radix`, zero-padded on the left to `width`.
    private static func appendDigits(of value: UInt64, width: Int, radix: UInt64, to bytes: inout [UInt8]) {
        bytes.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: width))
        var rest = value
        var index = bytes.count - 1
        while rest > 0 {
            let digit = UInt8(rest % radix)
            bytes[index] = digit < 10 ? UInt8(ascii: "0") + digit : UInt8(ascii: "a") + digit - 10
            rest /= radix
            index -= 1
        }
    }

    static func parse(_ text: String) -> LogHighWater? {
        let fields = text.split(separator: " ")
        guard fields.count == 5, fields[0] == "fluxbus-log-mark", fields[1] == "v1",
            fields[2].hasPrefix("bus="), fields[3].hasPrefix("sequence="), fields[4].hasPrefix("chain="), text.hasSuffix("\n"),
            let sequence = UInt64(fields[3].dropFirst("sequence=".count)),
            let chain = UInt64(fields[4].dropFirst("chain=".count).dropLast(), radix: 16)
        else { return nil }
        let busID = String(fields[2].dropFirst("bus=".count))
        guard busID.count == 32, busID.allSatisfy(\.isHexDigit) else { return nil }
        return LogHighWater(busID: busID, sequence: sequence, chain: chain)
    }

    /// Makes a new file's directory entry durable.
    static func syncDirectory(of path: String) -> Bool {
        let directory = open((path as NSString).deletingLastPathComponent, O_RDONLY | O_CLOEXEC)
        guard directory >= 0 else { return false }
        defer { close(directory) }
        return fsync(directory) == 0
    }

    /// A new bus id: 16 random bytes in hex.
    static func newBusID() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<16).map { _ in
            let byte = UInt8.random(in: 0...255, using: &generator)
            return (byte < 16 ? "0" : "") + String(byte, radix: 16)
        }.joined()
    }
}

/// A `log.mark` that holds anything but one whole record. Every mark is created whole and rewritten in place at the
/// same size, so an empty or short file is damage as much as a garbled one: the log can no longer be checked against
/// what it had committed. ``LogIdentity`` refuses to start on it, unless `--new-bus` says to go on from the log.
struct LogMarkDamage: Error, CustomStringConvertible {
    let path: String
    /// How many bytes the file holds (up to the 256 read).
    let bytes: Int

    /// What is wrong with the file: "is empty", "is cut short …", "is not a FluxBus log mark …".
    var reason: String {
        switch bytes {
        case 0: "is empty (0 bytes, where a mark is \(LogMark.recordBytes))"
        case ..<LogMark.recordBytes: "is cut short (\(bytes) bytes, where a mark is \(LogMark.recordBytes))"
        default: "is not a FluxBus log mark (\(bytes) bytes)"
        }
    }

    /// The refusal: the file, the reason, and what to do.
    var description: String {
        "cannot read \(path): it \(reason), so the log cannot be checked against what it had committed. "
            + LogContinuity.recovery
    }
}
