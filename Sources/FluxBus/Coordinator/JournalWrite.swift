import FluxBusProtocol

/// A ``LogWrite`` as a ``LogJournal`` record holds it, in the wire layout the protocol's records use (so that every
/// length is checked on the way back, as a message's are). Only the writes of a dispatch's path are journaled; a
/// snapshot's or a compaction's goes to SQLite directly (``journaled(_:)`` answers nil for them).
struct JournalWrite: WireItem {
    enum Kind: UInt8, WireEnum {
        case epoch = 1, action, completion, decision, plans, answer, store, poison
    }

    /// A request's plan for one action type.
    struct Plan: WireItem {
        var actionType = ""
        var steps: [PlanStep] = []

        mutating func visit<V: WireVisitor>(_ visitor: inout V) throws(V.Failure) {
            try visitor.string(&actionType, "actionType")
            try visitor.list(&steps, "steps")
        }
    }

    var kind = Kind.epoch
    /// The action's, the completion's, the decision's or the answer's sequence; a plan's request; a poison mark's.
    var sequence: UInt64 = 0
    var epoch: UInt64 = 0
    var action = BatchAction()
    var origin = ""
    /// A request id; a store's name; a poison mark's store.
    var name = ""
    var isBatch = false
    var batchFirst: UInt64 = 0
    var batchSize: UInt64 = 0
    var chain: UInt64 = 0
    var fingerprint: UInt64 = 0
    var entry = ReplayEntry()
    var output = StoreOutput()
    var plans: [Plan] = []
    /// An answer's body frame; a poison mark's reason, in UTF-8.
    var bytes: [UInt8] = []
    var historyFrom: UInt64 = 0
    var historyBefore: UInt64 = 0

    mutating func visit<V: WireVisitor>(_ visitor: inout V) throws(V.Failure) {
        try visitor.enumeration(&kind, "kind")
        switch kind {
        case .epoch:
            try visitor.u64(&epoch, "epoch")
        case .action:
            try visitor.u64(&sequence, "sequence")
            try visitor.u64(&epoch, "epoch")
            try action.visit(&visitor)
            try visitor.string(&origin, "origin")
            try visitor.string(&name, "requestID")
            try visitor.bool(&isBatch, "isBatch")
            try visitor.u64(&batchFirst, "batchFirst")
            try visitor.u64(&batchSize, "batchSize")
            try visitor.u64(&chain, "chain")
            try visitor.u64(&fingerprint, "fingerprint")
        case .completion:
            try entry.visit(&visitor)
        case .decision:
            try visitor.u64(&sequence, "sequence")
            try output.visit(&visitor)
        case .plans:
            try visitor.u64(&sequence, "request")
            try visitor.list(&plans, "plans")
        case .answer:
            try visitor.u64(&sequence, "sequence")
            try visitor.string(&name, "requestID")
            try visitor.bytes(&bytes, "body")
        case .store:
            try visitor.string(&name, "store")
            try visitor.u64(&historyFrom, "historyFrom")
            try visitor.u64(&historyBefore, "historyBefore")
        case .poison:
            try visitor.u64(&sequence, "sequence")
            try visitor.string(&name, "store")
            try visitor.bytes(&bytes, "reason")
        }
    }
}

/// One journal record's body: the writes of one group commit, in order.
struct JournalBody: WireItem {
    var writes: [JournalWrite] = []

    /// The most writes one record takes: a list's count is a u16, and a larger commit goes to SQLite directly.
    static let maximumWrites = 4_096

    mutating func visit<V: WireVisitor>(_ visitor: inout V) throws(V.Failure) {
        try visitor.list(&writes, "writes")
    }
}

extension JournalWrite {
    /// The writes as a journal record's body; nil when one of them is not journaled, or there are too many.
    static func journaled(_ writes: [LogWrite], codec: Codec) -> [UInt8]? {
        guard writes.count <= JournalBody.maximumWrites else { return nil }
        var body = JournalBody()
        body.writes.reserveCapacity(writes.count)
        for write in writes {
            guard let journaled = JournalWrite(write, codec: codec) else { return nil }
            body.writes.append(journaled)
        }
        return codec.encodeRecord(body)
    }

    /// A record's body as the writes it holds.
    /// - Throws: `DecodeError` when the body is not one the journal wrote.
    static func writes(in body: [UInt8], codec: Codec) throws -> [LogWrite] {
        let decoded = try body.withUnsafeBufferPointer { try codec.decodeRecord(JournalBody.self, from: $0) }
        return try decoded.writes.map { try $0.write(codec: codec) }
    }

    private init?(_ write: LogWrite, codec: Codec) {
        self.init()
        switch write {
        case .epoch(let epoch):
            self.epoch = epoch
        case .action(let sequence, let epoch, let action, let origin, let requestID, let batch, let chain, let fingerprint):
            kind = .action
            self.sequence = sequence
            self.epoch = epoch
            self.action = action
            self.origin = origin
            name = requestID
            isBatch = batch != nil
            batchFirst = batch?.first ?? 0
            batchSize = UInt64(batch?.size ?? 0)
            self.chain = chain
            self.fingerprint = fingerprint
        case .completion(let entry):
            kind = .completion
            self.entry = entry
        case .decision(let sequence, let output):
            kind = .decision
            self.sequence = sequence
            self.output = output
        case .plans(let request, let plans):
            kind = .plans
            sequence = request
            self.plans = plans.map { Plan(actionType: $0.key, steps: $0.value) }
        case .answer(let requestID, let sequence, let message):
            kind = .answer
            name = requestID
            self.sequence = sequence
            bytes = codec.encode(message)[1]
        case .store(let store, let history):
            kind = .store
            name = store
            historyFrom = history.from
            historyBefore = history.before
        case .poison(let mark):
            kind = .poison
            sequence = mark.sequence
            name = mark.store
            bytes = Array(mark.reason.utf8)
        case .snapshot, .snapshotBegin, .snapshotChunk, .snapshotAbandon, .compaction:
            return nil
        }
    }

    private func write(codec: Codec) throws -> LogWrite {
        switch kind {
        case .epoch: return .epoch(epoch)
        case .action:
            return .action(
                sequence: sequence, epoch: epoch, action: action, origin: origin, requestID: name,
                batch: isBatch ? (batchFirst, Int(batchSize)) : nil, chain: chain, fingerprint: fingerprint)
        case .completion: return .completion(entry)
        case .decision: return .decision(sequence: sequence, output: output)
        case .plans: return .plans(request: sequence, plans: Dictionary(plans.map { ($0.actionType, $0.steps) }) { $1 })
        case .answer: return .answer(requestID: name, sequence: sequence, message: try codec.decode([Codec.signature, bytes]))
        case .store: return .store(name, StoreHistory(from: historyFrom, before: historyBefore))
        case .poison: return .poison(PoisonMark(sequence: sequence, store: name, reason: String(decoding: bytes, as: UTF8.self)))
        }
    }
}
