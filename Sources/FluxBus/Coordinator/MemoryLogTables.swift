import FluxBusProtocol

/// What a ``MemoryLog`` has committed, in Swift collections: what the SQLite log's tables hold (LogSchema.swift), with
/// the same rules for what each write replaces, keeps or ignores, and for what compaction drops (LogWrite+SQL.swift).
/// Its memory is bounded as the SQLite log's is: compaction drops the same entries and request ids.
///
/// A class, so that it can outlive the log over it: the simulator's disk keeps it across a coordinator's crash.
final class MemoryLogTables {
    /// An accepted action, as the `action` table's row with its `outcome` row.
    struct Action {
        let sequence: UInt64
        /// The epoch it was logged in.
        let epoch: UInt64
        let action: BatchAction
        /// Empty for an action without one.
        let requestID: String
        let batchFirst: UInt64?
        let batchSize: Int
        let chain: UInt64
        /// The completed dispatch's entry without its payload (the action's); nil until it completed.
        var entry: ReplayEntry?
    }

    /// A request, as the `request` table's row, which its first sequence keys.
    struct Request {
        var requestID: String
        var answer: Message?
        var fingerprint: UInt64?
        var actionType: String?
    }

    /// The row of request `id`: the one its index names, if that row is still its own.
    func request(_ id: String) -> Request? {
        guard let sequence = requestSequences[id], let row = requests[sequence], row.requestID == id else { return nil }
        return row
    }

    /// In ascending sequence order: the engine appends in order (``commit(_:)`` refuses anything else).
    var actions: [Action] = []
    /// By first sequence.
    var requests: [UInt64: Request] = [:]
    /// Each request id's row, as the SQLite log's index in memory (``RequestIDIndex``) finds it.
    var requestSequences: [String: UInt64] = [:]
    var epochs: [UInt64] = []
    var busID: String?
    /// In the order first seen.
    var stores: [String] = []
    var histories: [String: StoreHistory] = [:]
    /// Each store's declaration as its replicas last joined with it.
    var declarations: [String: StoreDeclaration] = [:]
    /// In (sequence, store) order, one per pair.
    var poison: [PoisonMark] = []
    var snapshots: [String: LogSnapshot] = [:]
    /// Store → sequence → that snapshot's chunks: the recorded snapshot's, and those of one being received.
    var chunks: [String: [UInt64: SnapshotChunks]] = [:]
    /// Sequence → the outcomes released for it, the first one per store.
    var decisions: [UInt64: [StoreOutput]] = [:]
    /// A request's first sequence → its plans by action type.
    var plans: [UInt64: [String: [PlanStep]]] = [:]

    init() {}

    /// Applies a group commit's writes, all or none: an action out of order (an engine bug, which would fail the
    /// SQLite log's transaction too) refuses the whole commit.
    func commit(_ writes: [LogWrite]) throws {
        var last = actions.last?.sequence ?? 0
        for write in writes {
            guard let sequences = write.loggedSequences else { continue }
            guard sequences.lowerBound > last else {
                throw LogDamage(detail: "action #\(sequences.lowerBound) was logged after #\(last): the log keeps actions in sequence order")
            }
            last = sequences.upperBound
        }
        for write in writes { apply(write) }
    }

    private func apply(_ write: LogWrite) {
        switch write {
        case .epoch(let epoch): epochs.append(epoch)
        case .action(let sequence, let epoch, let action, _, let requestID, let batch, let chain, let fingerprint):
            actions.append(Action(
                sequence: sequence, epoch: epoch, action: action, requestID: requestID, batchFirst: batch?.first, batchSize: batch?.size ?? 0,
                chain: chain))
            // As SQL's INSERT OR REPLACE: an id logged again starts over.
            if let (requestID, first) = write.requestRow {
                requests[first] = Request(requestID: requestID, fingerprint: fingerprint, actionType: action.actionType)
                requestSequences[requestID] = first
            }
        case .actions(let run):
            // As the SQL's `action_run` row: each of its actions as `action` holds one, and the batch's request row.
            for (offset, action) in run.actions.enumerated() {
                actions.append(Action(
                    sequence: run.first + UInt64(offset), epoch: run.epoch, action: action, requestID: run.requestID,
                    batchFirst: run.batchFirst, batchSize: run.batchSize, chain: run.chains[offset]))
            }
            if let (requestID, first) = run.requestRow {
                requests[first] = Request(requestID: requestID, fingerprint: run.fingerprint, actionType: run.actions[0].actionType)
                requestSequences[requestID] = first
            }
        case .completion(let first, let last):
            // As the SQL's one row for the run: each of its sequences has the first's entry, with its own sequence.
            for sequence in first.sequence...last {
                guard let index = index(of: sequence) else { continue }
                var entry = first
                entry.sequence = sequence
                actions[index].entry = entry
            }
        case .decision(let sequence, let output):
            if decisions[sequence]?.contains(where: { $0.store == output.store }) != true { decisions[sequence, default: []].append(output) }
        case .plans(let request, let plans):
            self.plans[request, default: [:]].merge(plans) { $1 }
        case .answer(let requestID, let sequence, let message):
            // As SQL's upsert: the row at that sequence learns its answer if it is this request's, or is written anew.
            if let row = requests[sequence] {
                if row.requestID == requestID { requests[sequence]?.answer = message }
            } else {
                requests[sequence] = Request(requestID: requestID, answer: message)
            }
            if requestSequences[requestID] == nil { requestSequences[requestID] = sequence }
        case .store(let name, let history):
            guard histories[name] == nil else { return }
            stores.append(name)
            histories[name] = history
        case .declaration(let declaration):
            // As the SQL's UPDATE: only a store already recorded.
            if histories[declaration.name] != nil { declarations[declaration.name] = declaration }
        case .poison(let mark):
            let index = poison.firstIndex { ($0.sequence, $0.store) >= (mark.sequence, mark.store) } ?? poison.endIndex
            if index == poison.endIndex || (poison[index].sequence, poison[index].store) != (mark.sequence, mark.store) {
                poison.insert(mark, at: index)
            }
        case .snapshot(let snapshot):
            snapshots[snapshot.store] = snapshot
            chunks[snapshot.store] = chunks[snapshot.store]?.filter { $0.key == snapshot.sequence }
        case .snapshotBegin(let store, let sequence), .snapshotAbandon(let store, let sequence):
            // Never the recorded snapshot's own chunks: a snapshot is only received at a later sequence.
            if snapshots[store]?.sequence != sequence { chunks[store]?[sequence] = nil }
        case .snapshotChunk(let store, let sequence, let offset, let bytes):
            chunks[store, default: [:]][sequence, default: SnapshotChunks()].put(offset: offset, bytes: bytes)
        case .compaction(let through, let keepRequests):
            compact(through: through, keepRequests: keepRequests)
        }
    }

    /// Drops what the SQLite log's compaction deletes: actions, their entries and decisions up to `through`, the plans
    /// of requests that completed, and all but the newest `keepRequests` request ids.
    private func compact(through: UInt64, keepRequests: Int) {
        actions.removeFirst(actions.prefix { $0.sequence <= through }.count)
        decisions = decisions.filter { $0.key > through }
        // Every request that still has an action to run starts at or after the first action not completed.
        let lastCompleted = actions.last { $0.entry != nil }?.sequence ?? 0
        let firstPending = actions.lazy.filter { $0.sequence > lastCompleted }.map { $0.batchFirst ?? $0.sequence }.min()
        let keptPlans = firstPending ?? through + 1
        plans = plans.filter { $0.key >= keptPlans }
        // As SQL: the ids older than the newest `keepRequests`-th one's sequence go (at least one is kept, and ties).
        let newest = requests.keys.sorted(by: >)
        let rank = max(0, keepRequests - 1)
        if rank < newest.count {
            let oldestKept = newest[rank]
            requests = requests.filter { $0.key >= oldestKept }
            // The SQLite log rebuilds its index now and then; this one keeps only ids whose rows stayed, so that a
            // coordinator in memory for months holds no more ids than it remembers.
            requestSequences = requestSequences.filter { requests[$0.value]?.requestID == $0.key }
        }
    }
}
