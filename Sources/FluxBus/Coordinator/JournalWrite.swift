import FluxBusProtocol

/// How a ``LogJournal`` record's body holds a group commit's writes: each write a kind byte then its fields, integers
/// little-endian, strings and bytes after a u32 length. A completion holds its entry and an answer its message body as
/// the SQLite rows do (the protocol's record and frame layouts). Only the writes of a dispatch's path are journaled; a
/// snapshot's or a compaction's goes to SQLite directly (``encode(_:at:codec:)`` answers nil for them). A record starts
/// with the time of its commit, which SQLite's rows take when they apply it, however much later that is.
///
/// Written by hand rather than through the protocol's generic visitors: called from this module, those are not
/// specialized, and encoding a lock-step dispatch's record through them cost more than SQLite's commit it replaced.
enum JournalWrite {
    private enum Kind: UInt8 {
        case epoch = 1, action, completion, decision, plans, answer, store, poison
        /// The commit's time, seconds since 1970 (a Double's bits): the rows' `loggedAt`, `completedAt` and the like.
        case committedAt
        case declaration
        /// A run of completions (``LogWrite/completion(_:last:)``): its last sequence, then the first's entry. A
        /// `completion` written before runs is a run of one.
        case completions
        /// A batch's run of actions (``ActionRun``): what the run shares, then each action with its chain value.
        case actions
    }

    /// The writes as a record's body, and each one's ``LogWrite/encodedBlob(_:)`` (``JournalRecord/blobs``), which
    /// SQLite's rows take as they are; nil when one of the writes is not journaled.
    static func encode(_ writes: [LogWrite], at time: Double, codec: Codec) -> (body: [UInt8], blobs: [[UInt8]?])? {
        var out = Writer(capacity: 128 + writes.count * 96)
        var blobs: [[UInt8]?] = []
        blobs.reserveCapacity(writes.count)
        out.kind(.committedAt)
        out.u64(time.bitPattern)
        for write in writes {
            let blob = write.encodedBlob(codec)
            blobs.append(blob)
            switch write {
            case .epoch(let epoch):
                out.kind(.epoch)
                out.u64(epoch)
            case .action(let sequence, let epoch, let action, let origin, let requestID, let batch, let chain, let fingerprint):
                out.kind(.action)
                out.u64(sequence)
                out.u64(epoch)
                out.string(action.actionType)
                out.data(action.payload)
                out.optionalString(action.error)
                out.string(origin)
                out.string(requestID)
                out.u8(batch == nil ? 0 : 1)
                out.u64(batch?.first ?? 0)
                out.u64(UInt64(batch?.size ?? 0))
                out.u64(chain)
                out.u64(fingerprint)
            case .actions(let run):
                out.kind(.actions)
                out.u64(run.first)
                out.u64(run.epoch)
                out.string(run.origin)
                out.string(run.requestID)
                out.u64(run.batchFirst)
                out.u64(UInt64(run.batchSize))
                out.u64(run.fingerprint)
                out.u32(run.actions.count)
                for (action, chain) in zip(run.actions, run.chains) {
                    out.string(action.actionType)
                    out.data(action.payload)
                    out.optionalString(action.error)
                    out.u64(chain)
                }
            case .completion(_, let last):
                out.kind(.completions)
                out.u64(last)
                out.data(blob ?? [])
            case .decision(let sequence, let output):
                out.kind(.decision)
                out.u64(sequence)
                out.string(output.store)
                out.u8(output.status.rawValue)
                out.string(output.message)
                out.optionalData(output.output)
            case .plans(let request, let plans):
                out.kind(.plans)
                out.u64(request)
                out.u32(plans.count)
                for (actionType, steps) in plans {
                    out.string(actionType)
                    out.u32(steps.count)
                    for step in steps {
                        out.string(step.store)
                        out.u32(step.waitsFor.count)
                        for store in step.waitsFor { out.string(store) }
                    }
                }
            case .answer(let requestID, let sequence, _):
                out.kind(.answer)
                out.string(requestID)
                out.u64(sequence)
                out.data(blob ?? [])
            case .store(let name, let history):
                out.kind(.store)
                out.string(name)
                out.u64(history.from)
                out.u64(history.before)
            case .declaration(let declaration):
                out.kind(.declaration)
                out.data(codec.encodeRecord(declaration))
            case .poison(let mark):
                out.kind(.poison)
                out.u64(mark.sequence)
                out.string(mark.store)
                out.string(mark.reason)
            case .snapshot, .snapshotBegin, .snapshotChunk, .snapshotAbandon, .compaction:
                return nil
            }
        }
        return (out.finish(), blobs)
    }

    /// A record's body as the writes it holds, their blobs as ``encode(_:at:codec:)`` returned them, and the time of
    /// their commit when the record says it.
    /// - Throws: ``LogDamage`` when the body is not one ``encode(_:at:codec:)`` wrote.
    static func decode(_ body: [UInt8], codec: Codec) throws -> (writes: [LogWrite], blobs: [[UInt8]?], at: Double?) {
        var input = Reader(bytes: body)
        var writes: [LogWrite] = []
        var blobs: [[UInt8]?] = []
        var time: Double?
        while !input.isAtEnd {
            guard let kind = Kind(rawValue: try input.u8()) else { throw LogDamage(detail: "an unknown kind of write") }
            // Every kind but the commit's time is one write, with its blob when it has one.
            var blob: [UInt8]?
            switch kind {
            case .committedAt:
                time = Double(bitPattern: try input.u64())
                continue
            case .epoch:
                writes.append(.epoch(try input.u64()))
            case .action:
                let (sequence, epoch) = (try input.u64(), try input.u64())
                let action = BatchAction(actionType: try input.string(), payload: try input.data(), error: try input.optionalString())
                let (origin, requestID, batched) = (try input.string(), try input.string(), try input.u8() == 1)
                let (first, size, chain, fingerprint) = (try input.u64(), try input.u64(), try input.u64(), try input.u64())
                writes.append(.action(
                    sequence: sequence, epoch: epoch, action: action, origin: origin, requestID: requestID,
                    batch: batched ? (first, Int(size)) : nil, chain: chain, fingerprint: fingerprint))
            case .actions:
                let (first, epoch, origin, requestID) = (try input.u64(), try input.u64(), try input.string(), try input.string())
                let (batchFirst, batchSize, fingerprint) = (try input.u64(), try input.u64(), try input.u64())
                var run = ActionRun(
                    first: first, epoch: epoch, origin: origin, requestID: requestID, batch: (batchFirst, Int(batchSize)),
                    fingerprint: fingerprint)
                for _ in 0..<(try input.count()) {
                    let action = BatchAction(actionType: try input.string(), payload: try input.data(), error: try input.optionalString())
                    run.append(action, chain: try input.u64())
                }
                guard !run.actions.isEmpty else { throw LogDamage(detail: "a run of no actions") }
                writes.append(.actions(run))
            case .completion:
                let bytes = try input.data()
                let entry = try Reader.entry(bytes, codec)
                writes.append(.completion(entry, last: entry.sequence))
                blob = bytes
            case .completions:
                let last = try input.u64()
                let bytes = try input.data()
                let entry = try Reader.entry(bytes, codec)
                guard last >= entry.sequence else {
                    throw LogDamage(detail: "a run of completions from #\(entry.sequence) ends before it, at #\(last)")
                }
                writes.append(.completion(entry, last: last))
                blob = bytes
            case .decision:
                let sequence = try input.u64()
                let store = try input.string()
                guard let status = OutcomeStatus(rawValue: try input.u8()) else { throw LogDamage(detail: "an unknown status") }
                let output = StoreOutput(store: store, status: status, message: try input.string(), output: try input.optionalData())
                writes.append(.decision(sequence: sequence, output: output))
            case .plans:
                let request = try input.u64()
                var plans: [String: [PlanStep]] = [:]
                for _ in 0..<(try input.count()) {
                    let actionType = try input.string()
                    var steps: [PlanStep] = []
                    for _ in 0..<(try input.count()) {
                        let store = try input.string()
                        var waitsFor: [String] = []
                        for _ in 0..<(try input.count()) { waitsFor.append(try input.string()) }
                        steps.append(PlanStep(store: store, waitsFor: waitsFor))
                    }
                    plans[actionType] = steps
                }
                writes.append(.plans(request: request, plans: plans))
            case .answer:
                let (requestID, sequence) = (try input.string(), try input.u64())
                let body = try input.data()
                writes.append(.answer(requestID: requestID, sequence: sequence, message: try codec.decode([Codec.signature, body])))
                blob = body
            case .store:
                let name = try input.string()
                writes.append(.store(name, StoreHistory(from: try input.u64(), before: try input.u64())))
            case .declaration:
                writes.append(.declaration(try ActionLog.decodeDeclaration(try input.data(), store: "in a journal record", codec: codec)))
            case .poison:
                let sequence = try input.u64()
                writes.append(.poison(PoisonMark(sequence: sequence, store: try input.string(), reason: try input.string())))
            }
            blobs.append(blob)
        }
        return (writes, blobs, time)
    }

    /// The body being written, in a buffer of its own that grows by doubling: each field is stored in place, where
    /// appending each to an array took its generic path (about 100 instructions for a u64, 370 for a string).
    private struct Writer: ~Copyable {
        private var base: UnsafeMutableRawPointer
        private var capacity: Int
        private var count = 0

        init(capacity: Int) {
            self.capacity = max(capacity, 64)
            base = .allocate(byteCount: self.capacity, alignment: 8)
        }

        deinit { base.deallocate() }

        /// The bytes written, as an array.
        consuming func finish() -> [UInt8] { Array(UnsafeRawBufferPointer(start: base, count: count)) }

        private mutating func reserve(_ more: Int) {
            guard count + more > capacity else { return }
            let grown = max(2 * capacity, count + more)
            let fresh = UnsafeMutableRawPointer.allocate(byteCount: grown, alignment: 8)
            fresh.copyMemory(from: base, byteCount: count)
            base.deallocate()
            base = fresh
            capacity = grown
        }

        private mutating func raw(_ source: UnsafeRawBufferPointer) {
            guard let from = source.baseAddress, !source.isEmpty else { return }
            reserve(source.count)
            (base + count).copyMemory(from: from, byteCount: source.count)
            count += source.count
        }

        private mutating func store<Value: FixedWidthInteger>(_ value: Value) {
            reserve(MemoryLayout<Value>.size)
            base.storeBytes(of: value.littleEndian, toByteOffset: count, as: Value.self)
            count += MemoryLayout<Value>.size
        }

        mutating func kind(_ kind: Kind) { store(kind.rawValue) }
        mutating func u8(_ value: UInt8) { store(value) }
        mutating func u32(_ value: Int) { store(UInt32(value)) }
        mutating func u64(_ value: UInt64) { store(value) }

        mutating func data(_ value: [UInt8]) {
            u32(value.count)
            value.withUnsafeBytes { raw($0) }
        }

        mutating func string(_ value: String) {
            let stored: Void? = value.utf8.withContiguousStorageIfAvailable { utf8 in
                u32(utf8.count)
                raw(UnsafeRawBufferPointer(utf8))
            }
            if stored == nil { data(Array(value.utf8)) }
        }

        mutating func optionalString(_ value: String?) {
            u8(value == nil ? 0 : 1)
            if let value { string(value) }
        }

        mutating func optionalData(_ value: [UInt8]?) {
            u8(value == nil ? 0 : 1)
            if let value { data(value) }
        }
    }

    /// Reads back what ``Writer`` wrote, every length checked against what remains.
    private struct Reader {
        let bytes: [UInt8]
        var offset = 0

        var isAtEnd: Bool { offset == bytes.count }

        mutating func take(_ count: Int) throws -> ArraySlice<UInt8> {
            guard count >= 0, count <= bytes.count - offset else {
                throw LogDamage(detail: "a write is cut short at byte \(offset) of \(bytes.count)")
            }
            defer { offset += count }
            return bytes[offset..<offset + count]
        }

        mutating func u8() throws -> UInt8 { try take(1).first! }

        mutating func count() throws -> Int {
            Int(try take(4).reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
        }

        mutating func u64() throws -> UInt64 { try take(8).reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) } }
        mutating func data() throws -> [UInt8] { Array(try take(try count())) }
        mutating func string() throws -> String { String(decoding: try take(try count()), as: UTF8.self) }
        mutating func optionalString() throws -> String? { try u8() == 0 ? nil : try string() }
        mutating func optionalData() throws -> [UInt8]? { try u8() == 0 ? nil : try data() }

        static func entry(_ bytes: [UInt8], _ codec: Codec) throws -> ReplayEntry {
            try bytes.withUnsafeBufferPointer { try codec.decodeEntry($0) }
        }
    }
}
