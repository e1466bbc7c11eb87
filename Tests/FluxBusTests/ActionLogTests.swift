import Foundation
import Testing

@testable import FluxBus

@Suite("The action log on disk")
struct ActionLogTests {
    /// `--sync` must reach SQLite: GRDB puts a WAL database in NORMAL when it opens it, which once silently turned
    /// `always` into `batch`.
    @Test("each --sync mode is the synchronous level SQLite runs with", arguments: LogSync.allCases)
    func syncModeReachesSQLite(_ sync: LogSync) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fluxbus-log-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: directory) }
        let log = try ActionLog(directory: directory.path, sync: sync)
        #expect(try log.synchronousSetting() == ActionLog.synchronousLevel(sync))
        #expect(ActionLog.synchronousLevel(sync) == ["always": 2, "batch": 1, "off": 0][sync.rawValue])
    }
}
