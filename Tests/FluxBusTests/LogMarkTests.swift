import Foundation
import FluxBusProtocol
import Testing

@testable import FluxBus

/// `log.mark` says how far the log had committed. It is created whole (a temporary file renamed over it), so an empty
/// or short mark cannot be one a crash left, only damage: it used to count as "no mark", and a log that had also lost
/// its WAL then started as a shorter bus. It is refused now like a garbled mark; `--new-bus` goes on from the log.
@Suite("The mark beside the log")
struct LogMarkTests {
    static func freshDirectory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("fluxbus-mark-\(UUID().uuidString.prefix(8))")
    }

    /// A data directory whose log committed #1 and #2, with its mark beside it.
    static func directoryWithAMark() throws -> URL {
        let directory = freshDirectory()
        let log = try ActionLog(directory: directory.path, sync: .off)
        _ = try log.recover()
        for sequence in 1...2 as ClosedRange<UInt64> {
            log.append(sequence: sequence, epoch: 1, action: BatchAction(actionType: "a", payload: []), origin: "test",
                       requestID: "r\(sequence)", batch: nil, fingerprint: 1)
        }
        try log.flush()
        return directory
    }

    static func markFile(_ directory: URL) -> URL { directory.appendingPathComponent(LogMark.fileName) }

    /// Opening the log goes no further than the mark: ``ActionLog/recover()`` checks it.
    static func reopen(_ directory: URL, newBus: Bool = false) throws -> LogRecovery {
        try ActionLog(directory: directory.path, sync: .off, newBus: newBus).recover()
    }

    @Test("an empty, short or overlong mark refuses to start, naming the file, the reason and what to do",
          arguments: [(0, "is empty (0 bytes"), (1, "is cut short (1 bytes"), (109, "is cut short (109 bytes"),
                      (111, "is not a FluxBus log mark (111 bytes)")])
    func aMarkThatIsNotOneWholeRecordIsRefused(_ size: Int, _ reason: String) throws {
        let directory = try Self.directoryWithAMark()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = Self.markFile(directory)
        let whole = try Data(contentsOf: file)
        #expect(whole.count == LogMark.recordBytes)
        // Cut short keeps a prefix of the real record; overlong adds a byte after it.
        try (size <= whole.count ? whole.prefix(size) : whole + Data("x".utf8)).write(to: file)
        let error = try #require(throws: BusError.self) { try Self.reopen(directory) }
        #expect(error.code == .storage)
        for part in [file.path, reason, "cannot be checked", "--new-bus", "OPERATIONS.md"] {
            #expect(error.message.contains(part), "does not say \(part): \(error.message)")
        }
        // Refused again: the refusal changed nothing.
        #expect(try Data(contentsOf: file).count == size)
        #expect(throws: BusError.self) { try Self.reopen(directory) }
    }

    /// The flag the refusal names works: the log's end becomes the mark, written whole again.
    @Test func newBusGoesOnFromTheLogPastADamagedMark() throws {
        let directory = try Self.directoryWithAMark()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = Self.markFile(directory)
        try Data().write(to: file)
        let recovered = try Self.reopen(directory, newBus: true)
        guard case .newBus(let reason) = recovered.opening else {
            Issue.record("opening decided \(recovered.opening)")
            return
        }
        #expect(reason.contains("\(file.path) is empty"), "\(reason)")
        #expect(recovered.lastSequence == 2)
        let mark = try #require(try LogMark(directory: directory.path).read())
        #expect(mark.sequence == 2 && mark.busID == recovered.busID)
        #expect(try Self.reopen(directory).opening == .continued)
    }

    /// Nothing is created before the first record is written, and that record arrives whole by a rename: no moment
    /// leaves an empty `log.mark`, nor the temporary file once it is done.
    @Test func aMarkIsCreatedWhole() throws {
        let directory = Self.freshDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = Self.markFile(directory)
        let temporary = directory.appendingPathComponent(LogMark.fileName + ".new")
        // A log opened and never recovered (a crash in between) leaves no mark, so the next start takes it as new.
        _ = try ActionLog(directory: directory.path, sync: .off)
        #expect(!FileManager.default.fileExists(atPath: file.path))
        // A temporary file left by a crash during a creation is replaced, not appended to.
        try Data(repeating: 0x41, count: 300).write(to: temporary)
        let mark = try LogMark(directory: directory.path)
        #expect(try mark.read() == nil)
        let first = LogHighWater(busID: LogMark.newBusID(), sequence: 7, chain: 0xabc)
        try mark.write(first, durably: true)
        #expect(try Data(contentsOf: file) == Data(LogMark.record(first)))
        #expect(!FileManager.default.fileExists(atPath: temporary.path))
        // Later records go to the same file in place, and another reader sees them.
        let next = LogHighWater(busID: first.busID, sequence: 8, chain: 0xdef)
        try mark.write(next, durably: false)
        #expect(try LogMark(directory: directory.path).read() == next)
    }
}
