import Foundation
import FluxBusProtocol

/// The file `log.mark` beside the log: the bus id, and the last sequence the log committed with its chain value.
///
/// Created and fsynced with the log, then rewritten in place (one `pwrite` of a fixed-size record) after every
/// commit that logged an action, without fsync: the page cache survives a SIGKILL, and with `--sync always` the
/// log's own fsync comes first, so the mark never claims more than the log holds on disk. With `--sync batch` or
/// `off` a power loss may leave the mark ahead of the log, which then refuses to start: it did lose what the mark
/// names (docs/OPERATIONS.md, section 9).
///
/// The record is one line of text, always 110 bytes:
/// `fluxbus-log-mark v1 bus=<32 hex> sequence=<20 digits> chain=<16 hex>\n`.
final class LogMark: LogMarkStore {
    static let fileName = "log.mark"
    let path: String
    private let descriptor: Int32

    /// Opens the mark in `directory`, creating an empty file if there is none.
    /// - Throws: ``BusError`` (`storage`) when the file cannot be opened.
    init(directory: String) throws {
        path = (directory as NSString).appendingPathComponent(Self.fileName)
        descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw BusError(code: .storage, message: "cannot open \(path): \(String(cString: strerror(errno))). "
                + "Check the data directory's permissions, or pass another --data-dir")
        }
    }

    deinit { close(descriptor) }

    /// What the file says; nil when it is empty (a new data directory).
    /// - Throws: ``BusError`` (`storage`) when it holds something that is not a mark.
    func read() throws -> LogHighWater? {
        var buffer = [UInt8](repeating: 0, count: 256)
        let count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        let text = String(decoding: buffer.prefix(count), as: UTF8.self)
        guard let mark = Self.parse(text) else {
            throw BusError(code: .storage, message: "cannot read \(path): it is not a FluxBus log mark (\(count) bytes). "
                + LogContinuity.recovery)
        }
        return mark
    }

    /// Rewrites the record in place; `durably` also fsyncs the file and the directory (when a bus is created).
    func write(_ mark: LogHighWater, durably: Bool) throws {
        let record = Self.record(mark)
        let written = record.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
        guard written == record.count, !durably || (fsync(descriptor) == 0 && Self.syncDirectory(of: path)) else {
            throw BusError(code: .storage, message: "cannot write \(path): \(String(cString: strerror(errno))). "
                + "Check the disk (space, permissions), then start the coordinator again")
        }
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
