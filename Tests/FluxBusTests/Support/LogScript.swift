import FluxBusProtocol

@testable import FluxBus

/// A random sequence of the engine's calls to its log, valid as the engine makes them (sequences in order,
/// completions in order, snapshots begun before their chunks), played on two logs at once to compare their answers.
struct LogScript {
    private var rng: SplitMix64
    private var filler: RandomFiller<SplitMix64>
    private(set) var lastSequence: UInt64 = 0
    private(set) var lastCompleted: UInt64 = 0
    /// The actions logged, by sequence, for their entries.
    private var logged: [UInt64: BatchAction] = [:]
    /// The snapshot being received, with its bytes.
    private var receiving: (store: String, sequence: UInt64, bytes: [UInt8])?
    private var epoch: UInt64 = 0
    /// Each request id's first sequence, as last logged: the engine answers a request only there.
    private var requestFirst: [String: UInt64] = [:]
    /// The plan and outputs of the last completion, which the next one may repeat.
    private var recorded: (plan: [PlanStep], outputs: [StoreOutput])?

    static let stores = ["kv", "counter", "ledger"]
    /// A few ids, so that ids are used again: an id logged again, or answered twice.
    static let requestIDs = (0..<12).map { "r\($0)" }

    init(seed: UInt64) {
        rng = SplitMix64(seed: seed)
        filler = RandomFiller(rng: SplitMix64(seed: ~seed))
    }

    /// Plays one random call on each log; every few calls, a flush.
    mutating func step(_ logs: [any LogStorage]) throws {
        switch rng.below(20) {
        case 0: epoch += 1 + UInt64(rng.below(3)); for log in logs { log.beginEpoch(epoch) }
        case 1...5: appendRequest(logs)
        case 6...8: completeNext(logs)
        case 9: decideOrPlan(logs)
        case 10: answer(logs)
        case 11: let store = pick(Self.stores), history = StoreHistory(from: UInt64(rng.below(9)), before: lastCompleted + 1)
            // As the engine does on a join: the store, then the declaration it joined with (which may have changed).
            let handlesAll = rng.below(3) == 0
            let declaration = StoreDeclaration(
                name: store, dependsOn: rng.below(2) == 0 ? [] : [pick(Self.stores.filter { $0 != store })],
                handlesAll: handlesAll, handles: handlesAll ? [] : ["t\(rng.below(3))", "u"])
            for log in logs {
                log.rememberStore(store, history: history)
                log.recordDeclaration(declaration)
            }
        case 12: let mark = PoisonMark(sequence: UInt64(rng.below(Int(lastSequence) + 2)), store: pick(Self.stores), reason: pick(["a", "b"]))
            for log in logs { log.recordPoison(mark) }
        case 13...15: snapshotStep(logs)
        case 16: let through = UInt64(rng.below(Int(lastCompleted) + 1)), keep = rng.below(6)
            for log in logs { log.compact(through: through, keepRequests: keep) }
        default: for log in logs { try log.flush() }
        }
    }

    private mutating func pick<T>(_ values: [T]) -> T { values[rng.below(values.count)] }

    private mutating func action() -> BatchAction {
        BatchAction(actionType: pick(["kv.set", "counter.add", "noop"]), payload: rng.bytes(rng.below(12)), error: pick([nil, "", "boom"]))
    }

    /// A DISPATCH, or a batch of up to four actions under one request id.
    private mutating func appendRequest(_ logs: [any LogStorage]) {
        let size = rng.below(3) == 0 ? 1 + rng.below(4) : 0
        // Actions without a request id too; never an answer to none, which the engine does not record.
        let first = lastSequence + 1, requestID = pick(Self.requestIDs + [""]), fingerprint = rng.next()
        if !requestID.isEmpty { requestFirst[requestID] = first }
        for sequence in first..<first + UInt64(max(size, 1)) {
            let action = action()
            logged[sequence] = action
            for log in logs {
                log.append(
                    sequence: sequence, epoch: epoch, action: action, origin: "o", requestID: requestID,
                    batch: size == 0 ? nil : (first, size), fingerprint: fingerprint)
            }
            lastSequence = sequence
        }
    }

    private mutating func outputs() -> [StoreOutput] {
        (0..<rng.below(3)).map { _ in
            StoreOutput(store: pick(Self.stores), status: pick([.ok, .failed, .skipped]), message: pick(["", "no"]),
                        output: pick([nil, [], rng.bytes(3)]))
        }
    }

    private mutating func completeNext(_ logs: [any LogStorage]) {
        guard lastCompleted < lastSequence, let action = logged[lastCompleted + 1] else { return }
        lastCompleted += 1
        // Half the time the previous completion's plan and outputs again, as a batch's actions nearly always have: the
        // logs keep consecutive completions alike but for their sequences as one run (LogBuffer.addCompletion).
        if recorded == nil || rng.below(2) == 0 {
            recorded = ([PlanStep(store: pick(Self.stores), waitsFor: rng.below(2) == 0 ? [] : [pick(Self.stores)])], outputs())
        }
        let entry = ReplayEntry(
            epoch: epoch, sequence: lastCompleted, actionType: action.actionType, payload: action.payload, error: action.error,
            plan: recorded!.plan, outputs: recorded!.outputs)
        for log in logs { log.complete(entry) }
    }

    private mutating func decideOrPlan(_ logs: [any LogStorage]) {
        let sequence = lastCompleted + UInt64(rng.below(3))
        if rng.below(2) == 0 {
            guard let output = outputs().first else { return }
            for log in logs { log.recordDecision(output, sequence: sequence) }
        } else {
            let plans = [pick(["kv.set", "noop"]): [PlanStep(store: pick(Self.stores), waitsFor: [pick(Self.stores)])]]
            for log in logs { log.recordPlans(plans, request: sequence) }
        }
    }

    private mutating func answer(_ logs: [any LogStorage]) {
        // As the engine does: at the request's first sequence, perhaps twice, perhaps after compaction dropped its row.
        let message = filler.message(pick([.result, .batchResult]))
        let logged = requestFirst.keys.sorted()
        guard !logged.isEmpty else { return }
        let requestID = pick(logged)
        for log in logs { log.recordAnswer(message, for: requestID, sequence: requestFirst[requestID]!) }
    }

    /// Begins a snapshot, writes its chunks (or one chunk anywhere, which may overlap others), or records or abandons it.
    private mutating func snapshotStep(_ logs: [any LogStorage]) {
        guard let (store, sequence, bytes) = receiving else {
            let store = pick(Self.stores), sequence = UInt64(rng.below(Int(lastCompleted) + 2))
            receiving = (store, sequence, rng.bytes(rng.below(200)))
            for log in logs { log.beginSnapshot(store: store, sequence: sequence) }
            return
        }
        switch rng.below(4) {
        case 0:
            let size = 1 + rng.below(64)
            for start in stride(from: 0, to: bytes.count, by: size) {
                let chunk = Array(bytes[start..<min(start + size, bytes.count)])
                for log in logs { log.writeSnapshotChunk(store: store, sequence: sequence, offset: UInt64(start), bytes: chunk) }
            }
        case 1:
            let start = rng.below(bytes.count + 1), end = min(bytes.count, start + 1 + rng.below(80))
            for log in logs { log.writeSnapshotChunk(store: store, sequence: sequence, offset: UInt64(start), bytes: Array(bytes[start..<end])) }
        case 2:
            let snapshot = LogSnapshot(
                store: store, sequence: sequence, digest: rng.next(), checksum: StateDigest.fnv1a64(bytes), size: UInt64(bytes.count),
                worker: "w", chain: rng.next())
            for log in logs { log.saveSnapshot(snapshot) }
            receiving = nil
        default:
            for log in logs { log.abandonSnapshot(store: store, sequence: sequence) }
            receiving = nil
        }
    }
}
