import Foundation
import Testing

/// The engines decide; the shells do the I/O. A source check keeps it so: no engine file imports ZeroMQ or GRDB,
/// reads a clock, or draws a random number, and each stays small.
@Suite("Engine purity")
struct EnginePurityTests {
    static let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Sources/FluxBus").standardized

    /// The engines' files: everything in Coordinator/ and Worker/ but the shells, the SQLite log (not the
    /// in-memory one, which must stay as pure) and the files that are I/O by nature.
    static func engineFiles() throws -> [URL] {
        let shells: Set<String> = [
            "Coordinator.swift", "CoordinatorShell.swift", "ActionLog.swift", "ActionLog+Decisions.swift", "ActionLog+Reading.swift", "ActionLog+Snapshots.swift", "ActionLog+Journal.swift", "ActionLog+Sync.swift", "LogJournal.swift", "DirectoryLock.swift", "LogMark.swift", "LogSchema.swift",
            "RowBinder.swift", "LogStatements.swift", "LogWrite+SQL.swift", "StoredActions.swift",
            "Worker.swift", "Worker+State.swift", "WorkerShell.swift", "LivenessGuard.swift", "Checkpoint.swift", "Journal.swift",
            "HandlerCrashMarker.swift", "AwaitedHandler.swift",
        ]
        return try ["Coordinator", "Worker"].flatMap { folder in
            try FileManager.default.contentsOfDirectory(
                at: sources.appendingPathComponent(folder), includingPropertiesForKeys: nil)
        }.filter { $0.pathExtension == "swift" && !shells.contains($0.lastPathComponent) }
    }

    @Test("no engine file imports ZeroMQ or GRDB, reads a clock or draws at random")
    func enginesDoNoIO() throws {
        let files = try Self.engineFiles()
        #expect(files.count >= 10, "found \(files.count) engine files in \(Self.sources.path)")
        let forbidden = ["import ZeroMQ", "import GRDB", "ContinuousClock", "SystemClock", "Date()", ".random("]
        for file in files {
            let text = try String(contentsOf: file, encoding: .utf8)
            for word in forbidden {
                #expect(!text.contains(word), "\(file.lastPathComponent) uses \(word)")
            }
        }
    }

    @Test("no engine file exceeds about 300 lines")
    func enginesStaySmall() throws {
        for file in try Self.engineFiles() {
            let lines = try String(contentsOf: file, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).count
            #expect(lines <= 320, "\(file.lastPathComponent) has \(lines) lines")
        }
    }
}
