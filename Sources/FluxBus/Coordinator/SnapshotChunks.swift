/// One snapshot's chunks in the in-memory log, by offset: the SQLite log's `snapshot_chunk` rows of one store and
/// sequence, read back by the same rule (``ActionLog/readSnapshotBytes(_:store:sequence:from:to:)``).
struct SnapshotChunks {
    /// Sorted by offset, one chunk per offset.
    private var chunks: [(offset: UInt64, bytes: [UInt8])] = []

    /// Stores a chunk, replacing one at the same offset.
    mutating func put(offset: UInt64, bytes: [UInt8]) {
        // Chunks arrive in order: appending is the common case.
        if chunks.last.map({ $0.offset < offset }) ?? true { return chunks.append((offset, bytes)) }
        let index = firstIndex(notBelow: offset)
        if index < chunks.count, chunks[index].offset == offset {
            chunks[index].bytes = bytes
        } else {
            chunks.insert((offset, bytes), at: index)
        }
    }

    /// The bytes `offset..<end`: from the chunk that holds `offset` (the last one at or before it, else from 0) up to
    /// `end`. Fewer than asked for when chunks are missing.
    func read(from offset: UInt64, to end: UInt64) -> [UInt8] {
        let holding = firstIndex(notBelow: offset + 1) - 1
        var index = firstIndex(notBelow: holding >= 0 ? chunks[holding].offset : 0)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Int(end - offset))
        while index < chunks.count, chunks[index].offset < end {
            let (start, chunk) = chunks[index]
            let from = Int(max(offset, start) - start)
            let to = Int(min(end, start + UInt64(chunk.count)) - start)
            if from < to { bytes += chunk[from..<to] }
            index += 1
        }
        return bytes
    }

    /// The index of the first chunk at or after `offset`.
    private func firstIndex(notBelow offset: UInt64) -> Int {
        var (low, high) = (0, chunks.count)
        while low < high {
            let middle = (low + high) / 2
            if chunks[middle].offset < offset { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
