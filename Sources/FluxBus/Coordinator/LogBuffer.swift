import FluxBusProtocol

/// What a log keeps in memory whatever its storage: the writes waiting for the next group commit, and what the engine
/// reads on every dispatch without asking the storage (the oldest sequence, the stores, their histories and
/// snapshots, the poison marks). The SQLite log and the in-memory one share it (``BufferedLog``), so both answer alike.
final class LogBuffer {
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    private(set) var writes: [LogWrite] = []
    /// The sequence of the first action waiting in ``writes``: it must be committed before it is published.
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    private(set) var firstUnflushedAction: UInt64?
    var hasUnflushedActions: Bool { firstUnflushedAction != nil }
    /// The first sequence still in the log.
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    var oldestRetained: UInt64 = 1
    private(set) var knownStores: [String] = []
    private(set) var histories: [String: StoreHistory] = [:]
    private(set) var declarations: [String: StoreDeclaration] = [:]
    private(set) var poisonMarks: [PoisonMark] = []
    private var knownStoreSet: Set<String> = []
    var snapshots: [String: LogSnapshot] = [:]

    func add(_ write: LogWrite) {
        if firstUnflushedAction == nil, case .action(let sequence, _, _, _, _, _, _, _) = write { firstUnflushedAction = sequence }
        writes.append(write)
    }

    /// Adds one action of a batch: to the run written just before it when it is that run's next action (the batch's
    /// actions are logged one after another), else as a run of its own.
    func addBatchAction(
        sequence: UInt64, epoch: UInt64, action: BatchAction, origin: String, requestID: String, batch: (first: UInt64, size: Int),
        chain: UInt64, fingerprint: UInt64
    ) {
        if firstUnflushedAction == nil { firstUnflushedAction = sequence }
        if let index = writes.indices.last,
            writes[index].extendRun(sequence: sequence, epoch: epoch, origin: origin, batch: batch, action: action, chain: chain)
        {
            return
        }
        var run = ActionRun(first: sequence, epoch: epoch, origin: origin, requestID: requestID, batch: batch, fingerprint: fingerprint)
        run.append(action, chain: chain)
        writes.append(.actions(run))
    }

    /// Adds a completed dispatch's entry, without its payload: to the completion written just before it when that ends
    /// at the sequence before and their entries are alike but for sequence and payload (a batch's, nearly always),
    /// else as a write of its own.
    func addCompletion(_ entry: ReplayEntry) {
        if let index = writes.indices.last, writes[index].extendCompletion(with: entry) { return }
        var outcomes = entry
        outcomes.payload = []
        writes.append(.completion(outcomes, last: entry.sequence))
    }

    /// After a commit: nothing waits any more.
    func committed() {
        writes.removeAll(keepingCapacity: true)
        firstUnflushedAction = nil
    }

    /// After a commit that keeps its writes (the journal's, until SQLite applies them): hands them over without
    /// copying one, and nothing waits any more.
    func takeWrites() -> [LogWrite] {
        var taken: [LogWrite] = []
        // A lock-step dispatch's commit has five writes: the next one's array is allocated once, not grown three times.
        taken.reserveCapacity(8)
        swap(&taken, &writes)
        firstUnflushedAction = nil
        return taken
    }

    /// What the log held when it was opened.
    func recovered(_ recovery: LogRecovery, oldestRetained: UInt64, snapshots: [String: LogSnapshot]) {
        self.oldestRetained = oldestRetained
        knownStores = recovery.stores
        knownStoreSet = Set(recovery.stores)
        histories = recovery.histories
        declarations = Dictionary(recovery.declarations.map { ($0.name, $0) }, uniquingKeysWith: { $1 })
        poisonMarks = recovery.poisonMarks
        self.snapshots = snapshots
    }

    /// Whether `name` is new; a new store is known from now on.
    func remember(_ name: String, history: StoreHistory) -> Bool {
        guard knownStoreSet.insert(name).inserted else { return false }
        knownStores.append(name)
        histories[name] = history
        return true
    }

    /// Whether `declaration` differs from the one recorded for its store; it is the recorded one from now on.
    func remember(_ declaration: StoreDeclaration) -> Bool {
        guard declarations[declaration.name] != declaration else { return false }
        declarations[declaration.name] = declaration
        return true
    }

    func addPoison(_ mark: PoisonMark) {
        poisonMarks.append(mark)
        poisonMarks.sort { ($0.sequence, $0.store) < ($1.sequence, $1.store) }
    }
}

extension ReplayEntry {
    /// Whether `other` records the same as this entry but for its sequence and payload: the same epoch, action type,
    /// error, plan and outputs, their text byte for byte (the row keeps the first's bytes for all). A batch's plan is
    /// one array, shared, which compares by identity; store names are ASCII.
    fileprivate func isAlike(_ other: ReplayEntry) -> Bool {
        guard epoch == other.epoch, actionType.hasSameBytes(as: other.actionType), plan == other.plan,
            (error.map { other.error?.hasSameBytes(as: $0) ?? false } ?? (other.error == nil)), outputs.count == other.outputs.count
        else { return false }
        for index in outputs.indices {
            guard outputs[index].store == other.outputs[index].store, outputs[index].status == other.outputs[index].status,
                outputs[index].message.hasSameBytes(as: other.outputs[index].message),
                outputs[index].output == other.outputs[index].output
            else { return false }
        }
        return true
    }
}

extension LogWrite {
    /// Adds a batch's next action to this write when it is the run that action continues, in place: the write lets go
    /// of the run before it grows, so its lists are not shared then and grow without a copy (`switch consume self`
    /// copied them on every action). Asked once per action of every batch.
    fileprivate mutating func extendRun(
        sequence: UInt64, epoch: UInt64, origin: String, batch: (first: UInt64, size: Int), action: BatchAction, chain: UInt64
    ) -> Bool {
        guard case .actions(var run) = self,
            run.continues(sequence: sequence, epoch: epoch, origin: origin, batch: batch, action: action)
        else { return false }
        self = .epoch(0)
        run.append(action, chain: chain)
        self = .actions(run)
        return true
    }

    /// Extends this write to `entry` when it is the completions just before it and alike, in place.
    fileprivate mutating func extendCompletion(with entry: ReplayEntry) -> Bool {
        guard case .completion(let first, let last) = self, last + 1 == entry.sequence, first.isAlike(entry) else { return false }
        self = .completion(first, last: entry.sequence)
        return true
    }
}
