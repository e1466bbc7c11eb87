/// Completed entries already in their wire layout, one after another: a REPLAY's list as it travels, less its count.
///
/// The coordinator's log holds each entry in this layout, less its payload (kept once, with the action); an
/// ``EntrySplicer`` puts the payload back in, and the writer copies the result into the frame. Serving a FETCH then
/// costs a copy per entry, where decoding every entry and encoding it again cost about four times as much.
package struct EncodedEntries: Sendable, Hashable {
    /// How many entries `bytes` holds.
    package private(set) var count = 0
    /// The entries' wire layout, back to back.
    package private(set) var bytes: [UInt8] = []
    /// The first and the last entry's sequence; 0 when there is none.
    package private(set) var firstSequence: UInt64 = 0
    package private(set) var lastSequence: UInt64 = 0

    package init() {}

    /// The entries, encoded by the codec's writer: what a log without rows in wire layout serves.
    package init(_ entries: [ReplayEntry]) {
        for var entry in entries {
            var sizer = WireSizer(limits: .representable)
            do { try entry.visit(&sizer) } catch { preconditionFailure("FluxBus cannot encode this entry: \(error)") }
            var writer = WireWriter(capacity: sizer.count)
            entry.visit(&writer)
            writer.bytes.withUnsafeBufferPointer { append($0, sequence: entry.sequence) }
        }
    }

    /// The entries, decoded. The bytes are the writer's or a splicer's, which checked every field, so a failure here
    /// is FluxBus's own bug.
    package func decoded() -> [ReplayEntry] {
        bytes.withUnsafeBufferPointer { buffer in
            var reader = WireReader(buffer, limits: .representable)
            var entries: [ReplayEntry] = []
            entries.reserveCapacity(count)
            do {
                for _ in 0..<count {
                    var entry = ReplayEntry()
                    try entry.visit(&reader)
                    entries.append(entry)
                }
                try reader.finish()
            } catch {
                preconditionFailure("FluxBus wrote entries it cannot read back: \(error)")
            }
            return entries
        }
    }

    fileprivate mutating func append(_ entry: UnsafeBufferPointer<UInt8>, sequence: UInt64) {
        bytes.append(contentsOf: entry)
        note(sequence)
    }

    fileprivate mutating func note(_ sequence: UInt64) {
        if count == 0 { firstSequence = sequence }
        lastSequence = sequence
        count += 1
    }

    fileprivate mutating func append(_ part: UnsafeBufferPointer<UInt8>) { bytes.append(contentsOf: part) }

    /// Writes `sequence` over the u64 at `offset`, in the codec's byte order.
    fileprivate mutating func overwriteSequence(_ sequence: UInt64, at offset: Int) {
        bytes.withUnsafeMutableBytes { $0.storeBytes(of: sequence.bigEndian, toByteOffset: offset, as: UInt64.self) }
    }

    fileprivate mutating func appendLength(_ length: Int) {
        withUnsafeBytes(of: UInt32(truncatingIfNeeded: length).bigEndian) { bytes.append(contentsOf: $0) }
    }
}

/// Builds ``EncodedEntries`` from a log's rows: each row an entry in wire layout with an empty payload, and the payload
/// beside it. Every field is checked as the decoder would check it, against the codec's limits, so that a row changed
/// on disk is refused here rather than sent to a replica that cannot read it. Entries' plans and outputs nearly always
/// repeat the previous entry's bytes, and those are checked once.
package struct EntrySplicer {
    /// Where an entry landed, and what the log's chain covers of it.
    package struct Spliced {
        package let sequence: UInt64
        package let actionType: String
        /// The bytes from the sequence through the error: the log chain hashes exactly these after the previous value.
        fileprivate let hashed: Range<Int>
    }

    private let limits: Limits
    package private(set) var entries = EncodedEntries()
    /// The last plan and outputs checked, as bytes.
    private var checkedTail: [UInt8] = []

    package init(limits: Limits) {
        self.limits = limits
    }

    /// Appends the entry in `row` with `payload` in place of the row's own (empty) one, and `sequence`, when given, in
    /// place of the row's: one row of the log holds a run of completions alike but for their sequences.
    /// - Throws: ``DecodeError`` when the row is not an entry in wire layout within the limits.
    package mutating func append(
        row: UnsafeBufferPointer<UInt8>, payload: UnsafeBufferPointer<UInt8>, sequence: UInt64? = nil
    ) throws(DecodeError) -> Spliced {
        var reader = WireReader(row, limits: limits)
        var entry = ReplayEntry()
        try reader.u64(&entry.epoch, "epoch")
        try reader.u64(&entry.sequence, "sequence")
        if let sequence { entry.sequence = sequence }
        try reader.string(&entry.actionType, "actionType")
        let payloadStart = reader.position
        try reader.bytes(&entry.payload, "payload")
        let payloadEnd = reader.position
        try reader.optionalString(&entry.error, "error")
        let errorEnd = reader.position
        guard payload.count <= limits.maxBytesField else {
            throw .overLimit("payload", length: payload.count, limit: limits.maxBytesField)
        }
        let tail = UnsafeBufferPointer(rebasing: row[errorEnd...])
        if !checkedTail.withUnsafeBytes({ sameBytes($0, UnsafeRawBufferPointer(tail)) }) {
            var tailReader = WireReader(tail, limits: limits)
            try tailReader.repeatingList(&entry.plan, "plan")
            try tailReader.repeatingList(&entry.outputs, "outputs")
            try tailReader.finish()
            checkedTail = Array(tail)
        }
        let start = entries.bytes.count
        entries.append(UnsafeBufferPointer(rebasing: row[..<payloadStart]))
        if sequence != nil { entries.overwriteSequence(entry.sequence, at: start + 8) }
        entries.appendLength(payload.count)
        entries.append(payload)
        entries.append(UnsafeBufferPointer(rebasing: row[payloadEnd...]))
        entries.note(entry.sequence)
        let hashedEnd = start + errorEnd - (payloadEnd - payloadStart) + 4 + payload.count
        return Spliced(sequence: entry.sequence, actionType: entry.actionType, hashed: start + 8..<hashedEnd)
    }

    /// The log chain value after `spliced`, given the value after the entry before it: ``LogChain`` over its bytes.
    package func chain(of spliced: Spliced, after previous: UInt64) -> UInt64 {
        var hasher = WireHasher()
        hasher.u64(previous)
        entries.bytes.withUnsafeBufferPointer { hasher.raw(UnsafeBufferPointer(rebasing: $0[spliced.hashed])) }
        return hasher.value
    }
}
