import Foundation
import GRDB

/// The SQL behind snapshots in chunks (table `snapshot_chunk`, schema v4): their bytes stay in the log, and only
/// their metadata in memory (docs/ARCHITECTURE.md, "Where snapshot bytes live").
extension ActionLog {
    /// Every recorded snapshot's metadata.
    static func readSnapshots(_ db: Database) throws -> [LogSnapshot] {
        try Row.fetchAll(db, sql: "SELECT store, sequence, digest, checksum, size, worker, chain FROM snapshot").map { row in
            LogSnapshot(
                store: row["store"], sequence: row["sequence"], digest: UInt64(bitPattern: row["digest"]),
                checksum: UInt64(bitPattern: row["checksum"]), size: UInt64(bitPattern: row["size"]), worker: row["worker"],
                chain: UInt64(bitPattern: row["chain"]))
        }
    }

    /// Drops the chunks of snapshots never recorded: they were being received when the last run stopped.
    static func dropUnrecordedSnapshotChunks(_ db: Database) throws {
        try db.execute(sql: """
            DELETE FROM snapshot_chunk WHERE NOT EXISTS
            (SELECT 1 FROM snapshot s WHERE s.store = snapshot_chunk.store AND s.sequence = snapshot_chunk.sequence)
            """)
    }

    /// The bytes `from..<to` of a snapshot, gathered from the chunks that hold them (fewer when chunks are missing).
    static func readSnapshotBytes(_ db: Database, store: String, sequence: UInt64, from offset: UInt64, to end: UInt64) throws -> [UInt8] {
        // The chunk that holds `offset`, then those up to `end`: both through the primary key.
        let start = try Int64.fetchOne(db.cachedStatement(sql: """
            SELECT offset FROM snapshot_chunk WHERE store = ? AND sequence = ? AND offset <= ? ORDER BY offset DESC LIMIT 1
            """), arguments: [store, sequence, offset]) ?? 0
        let rows = try Row.fetchAll(db.cachedStatement(sql: """
            SELECT offset, bytes FROM snapshot_chunk WHERE store = ? AND sequence = ? AND offset >= ? AND offset < ?
            ORDER BY offset
            """), arguments: [store, sequence, start, end])
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Int(end - offset))
        for row in rows {
            let chunkStart = UInt64(row["offset"] as Int64)
            let data = row["bytes"] as Data
            let from = Int(max(offset, chunkStart) - chunkStart)
            let to = Int(min(end, chunkStart + UInt64(data.count)) - chunkStart)
            if from < to { bytes += data[data.startIndex + from..<data.startIndex + to] }
        }
        return bytes
    }

    /// A recorded snapshot's bytes `offset..<offset + count`, read through SQLite once the journal is applied.
    func snapshotBytes(store: String, sequence: UInt64, offset: UInt64, count: Int) throws -> [UInt8]? {
        try applyJournal()
        return try snapshotBytes(store: store, sequence: sequence, offset: offset, count: count) { end in
            try database.inDatabase { db in try Self.readSnapshotBytes(db, store: store, sequence: sequence, from: offset, to: end) }
        }
    }
}
