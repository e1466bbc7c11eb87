import Foundation
import FluxBusProtocol
import GRDB
import Testing

@testable import FluxBus

/// Snapshot bytes in the SQLite log, in chunks (docs/ARCHITECTURE.md, "Where snapshot bytes live").
@Suite("Snapshot chunks in the log")
struct SnapshotChunksTests {
    static func directory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("fluxbus-chunks-\(UUID().uuidString.prefix(8))")
    }

    static func bytes(_ count: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) } }

    static func snapshot(_ store: String, at sequence: UInt64, _ bytes: [UInt8]) -> LogSnapshot {
        LogSnapshot(
            store: store, sequence: sequence, digest: 99, checksum: StateDigest.fnv1a64(bytes), size: UInt64(bytes.count),
            worker: "w1", chain: 0x5EED ^ sequence)
    }

    /// Reads across chunk boundaries return exactly the bytes asked for; a newer snapshot replaces the older one and
    /// its chunks; a transfer id for the replaced one finds nothing.
    @Test func readsSpanChunksAndANewerSnapshotReplacesTheOlder() throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let log = try ActionLog(directory: directory.path, sync: .off)
        _ = try log.recover()
        let state = Self.bytes(1_000)
        log.beginSnapshot(store: "kv", sequence: 5)
        for offset in stride(from: 0, to: state.count, by: 300) {
            log.writeSnapshotChunk(store: "kv", sequence: 5, offset: UInt64(offset), bytes: Array(state[offset..<min(offset + 300, state.count)]))
        }
        log.saveSnapshot(Self.snapshot("kv", at: 5, state))
        try log.flush()
        #expect(try log.snapshotBytes(store: "kv", sequence: 5, offset: 250, count: 400) == Array(state[250..<650]))
        #expect(try log.snapshotBytes(store: "kv", sequence: 5, offset: 900, count: 400) == Array(state[900...]))
        #expect(try log.snapshotBytes(store: "kv", sequence: 4, offset: 0, count: 10) == nil)

        let newer = Self.bytes(20)
        log.beginSnapshot(store: "kv", sequence: 9)
        log.writeSnapshotChunk(store: "kv", sequence: 9, offset: 0, bytes: newer)
        log.saveSnapshot(Self.snapshot("kv", at: 9, newer))
        try log.flush()
        #expect(try log.snapshotBytes(store: "kv", sequence: 5, offset: 0, count: 10) == nil)
        #expect(try log.snapshotBytes(store: "kv", sequence: 9, offset: 0, count: 100) == newer)
        let sequences = try DatabaseQueue(path: log.path!).read { db in
            try UInt64.fetchAll(db, sql: "SELECT DISTINCT sequence FROM snapshot_chunk WHERE store = 'kv'")
        }
        #expect(sequences == [9])
    }

    /// Chunks of a snapshot never recorded (the coordinator stopped mid-transfer) are dropped when the log is opened
    /// again, and the previous snapshot stands.
    @Test func aHalfReceivedSnapshotIsNotRecordedAndItsChunksGoAtTheNextOpening() throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let state = Self.bytes(64)
        do {
            let log = try ActionLog(directory: directory.path, sync: .off)
            _ = try log.recover()
            log.beginSnapshot(store: "kv", sequence: 3)
            log.writeSnapshotChunk(store: "kv", sequence: 3, offset: 0, bytes: state)
            log.saveSnapshot(Self.snapshot("kv", at: 3, state))
            log.beginSnapshot(store: "kv", sequence: 7)
            log.writeSnapshotChunk(store: "kv", sequence: 7, offset: 0, bytes: Self.bytes(10))
            try log.flush()
        }
        let reopened = try ActionLog(directory: directory.path, sync: .off)
        _ = try reopened.recover()
        #expect(reopened.snapshots["kv"] == Self.snapshot("kv", at: 3, state))
        #expect(try reopened.snapshotBytes(store: "kv", sequence: 3, offset: 0, count: 100) == state)
        let chunks = try DatabaseQueue(path: reopened.path!).read { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM snapshot_chunk WHERE sequence = 7") ?? -1
        }
        #expect(chunks == 0)
    }

    /// A log written before chunks (schema v3) keeps its snapshots: v4 moves each one's bytes into chunks and
    /// records their size and checksum.
    @Test func aVersion3SnapshotMovesIntoChunks() throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let state = Self.bytes(LogSchema.chunkBytes * 2 + 123)
        let path = directory.appendingPathComponent(ActionLog.fileName).path
        let database = try DatabaseQueue(path: path)
        try LogSchema.migrator.migrate(database, upTo: "v3")
        try database.write { db in
            try db.execute(sql: """
                INSERT INTO snapshot (store, sequence, digest, state, worker, takenAt) VALUES ('kv', 12, 77, ?, 'w1', 0)
                """, arguments: [Data(state)])
        }
        try database.close()
        let log = try ActionLog(directory: directory.path, sync: .off)
        _ = try log.recover()
        let snapshot = try #require(log.snapshots["kv"])
        #expect(snapshot.size == UInt64(state.count) && snapshot.checksum == StateDigest.fnv1a64(state) && snapshot.digest == 77)
        #expect(try log.snapshotBytes(store: "kv", sequence: 12, offset: 0, count: state.count) == state)
        #expect(try log.snapshotBytes(store: "kv", sequence: 12, offset: UInt64(LogSchema.chunkBytes) - 5, count: 10)
            == Array(state[(LogSchema.chunkBytes - 5)..<(LogSchema.chunkBytes + 5)]))
    }
}
