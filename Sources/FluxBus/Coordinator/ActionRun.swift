import FluxBusProtocol

/// Consecutive actions of one batch, logged together: one write, and one row of the `action_run` table, rather than a
/// row of `action` each. SQLite's work per row was a fifth of what the coordinator spent on a batched action; a
/// run's row costs it about as much as one of them for a thousand actions.
///
/// Every action of a run shares its request id, its batch's first sequence and size, its epoch and its origin; each
/// keeps its own type, payload, error and log chain value.
struct ActionRun {
    let first: UInt64
    let epoch: UInt64
    let origin: String
    let requestID: String
    let batchFirst: UInt64
    let batchSize: Int
    let fingerprint: UInt64
    private(set) var actions: [BatchAction]
    private(set) var chains: [UInt64]
    /// About how many bytes the actions take in `action_run.actions`.
    private(set) var bytes = 0

    /// A run holds at most this many bytes of actions: a row of a few MiB at most, however large the batch.
    static let maxBytes = 4 << 20

    init(first: UInt64, epoch: UInt64, origin: String, requestID: String, batch: (first: UInt64, size: Int), fingerprint: UInt64) {
        self.first = first
        self.epoch = epoch
        self.origin = origin
        self.requestID = requestID
        batchFirst = batch.first
        batchSize = batch.size
        self.fingerprint = fingerprint
        actions = []
        chains = []
    }

    var last: UInt64 { first + UInt64(actions.count) - 1 }

    /// Whether the action at `sequence`, of this epoch, origin and batch, is the next one of this run, and fits it.
    func continues(
        sequence: UInt64, epoch: UInt64, origin: String, batch: (first: UInt64, size: Int), action: BatchAction
    ) -> Bool {
        first + UInt64(actions.count) == sequence && self.epoch == epoch && batchFirst == batch.first
            && origin.hasSameBytes(as: self.origin) && bytes + Self.size(of: action) <= Self.maxBytes
    }

    mutating func append(_ action: BatchAction, chain: UInt64) {
        actions.append(action)
        chains.append(chain)
        bytes += Self.size(of: action)
    }

    /// The `request` row the run adds: its batch's, when the run starts the batch and the batch has an id.
    var requestRow: (requestID: String, sequence: UInt64)? {
        first == batchFirst && !requestID.isEmpty ? (requestID, first) : nil
    }

    /// The bytes of one action in ``encodedActions``.
    static func size(of action: BatchAction) -> Int {
        2 + action.actionType.utf8.count + 4 + action.payload.count + 1 + (action.error.map { 2 + $0.utf8.count } ?? 0) + 8
    }

    /// The actions as `action_run.actions` holds them, back to back: each one's type (u16 length, UTF-8), payload
    /// (u32 length, bytes), error (a byte 0, or 1 then a u16 length and UTF-8) and chain value (u64), big-endian, as
    /// the protocol lays out its fields.
    var encodedActions: [UInt8] { Self.encoded(zip(actions, chains), bytes: bytes) }

    /// Actions with their chain values, laid out as ``encodedActions`` lays out a run's.
    static func encoded(_ actions: some Sequence<(BatchAction, UInt64)>, bytes: Int = 0) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes)
        for (action, chain) in actions {
            Self.append(string: action.actionType, to: &out)
            Self.append(UInt32(action.payload.count), to: &out)
            out.append(contentsOf: action.payload)
            if let error = action.error {
                out.append(1)
                Self.append(string: error, to: &out)
            } else {
                out.append(0)
            }
            Self.append(chain, to: &out)
        }
        return out
    }

    /// The actions of a row, with their chain values; `count` of them, as its `first` and `last` say.
    /// - Throws: ``LogDamage`` when the bytes are not `count` actions laid out as ``encodedActions`` lays them.
    static func decode(_ bytes: UnsafeBufferPointer<UInt8>, count: Int, first: UInt64) throws -> [(action: BatchAction, chain: UInt64)] {
        var reader = Reader(bytes: bytes, first: first)
        var decoded: [(action: BatchAction, chain: UInt64)] = []
        decoded.reserveCapacity(count)
        for _ in 0..<count {
            let next = try reader.next()
            decoded.append((BatchAction(
                actionType: String(decoding: next.actionType, as: UTF8.self), payload: Array(next.payload),
                error: next.error.map { String(decoding: $0, as: UTF8.self) }), next.chain))
        }
        try reader.finish(count: count)
        return decoded
    }

    /// Reads ``encodedActions`` in place, action by action, every length checked against what remains and every
    /// text against UTF-8.
    struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        let first: UInt64
        private(set) var offset: Int

        init(bytes: UnsafeBufferPointer<UInt8>, first: UInt64, offset: Int = 0) {
            self.bytes = bytes
            self.first = first
            self.offset = offset
        }

        /// The next action's fields, as views of the bytes.
        /// - Throws: ``LogDamage`` when the bytes end first or hold text that is not UTF-8.
        mutating func next() throws -> (
            actionType: UnsafeBufferPointer<UInt8>, payload: UnsafeBufferPointer<UInt8>, error: UnsafeBufferPointer<UInt8>?, chain: UInt64
        ) {
            let actionType = try text()
            let payload = try take(Int(try integer(UInt32.self)))
            let error = try take(1)[0] == 0 ? nil : try text()
            return (actionType, payload, error, try integer(UInt64.self))
        }

        /// Checks that the `count` actions read were all the bytes held.
        func finish(count: Int) throws {
            guard offset == bytes.count else {
                throw LogDamage(detail: "the actions logged from #\(first) hold \(bytes.count - offset) bytes more than their \(count) actions")
            }
        }

        private mutating func take(_ count: Int) throws -> UnsafeBufferPointer<UInt8> {
            guard count <= bytes.count - offset else {
                throw LogDamage(detail: "the actions logged from #\(first) are cut short at byte \(offset) of \(bytes.count)")
            }
            defer { offset += count }
            return UnsafeBufferPointer(rebasing: bytes[offset..<offset + count])
        }

        private mutating func integer<T: FixedWidthInteger>(_: T.Type) throws -> T {
            try take(MemoryLayout<T>.size).reduce(T(0)) { $0 << 8 | T($1) }
        }

        private mutating func text() throws -> UnsafeBufferPointer<UInt8> {
            let text = try take(Int(try integer(UInt16.self)))
            guard String(validating: text, as: UTF8.self) != nil else {
                throw LogDamage(detail: "an action logged from #\(first) has text that is not UTF-8")
            }
            return text
        }
    }

    private static func append(string: String, to out: inout [UInt8]) {
        var text = string
        text.withUTF8 { utf8 in
            append(UInt16(utf8.count), to: &out)
            out.append(contentsOf: utf8)
        }
    }

    private static func append<T: FixedWidthInteger>(_ value: T, to out: inout [UInt8]) {
        withUnsafeBytes(of: value.bigEndian) { out.append(contentsOf: $0) }
    }
}
