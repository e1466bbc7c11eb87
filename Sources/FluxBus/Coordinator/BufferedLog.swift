import FluxBusProtocol

/// A ``LogStorage`` whose writes wait in a ``LogBuffer`` until its group commit: the SQLite ``ActionLog`` and the
/// ``MemoryLog``. Everything but opening, committing and reading the storage is written once, here.
protocol BufferedLog: LogStorage {
    var buffer: LogBuffer { get }
    /// The bus id and the chain, which ``append(sequence:epoch:action:origin:requestID:batch:fingerprint:)`` extends.
    var identity: LogIdentity { get }
    /// Where commits and snapshots are timed, when the coordinator serves metrics.
    var metrics: LogMetrics? { get }
}

extension BufferedLog {
    var hasUnflushedActions: Bool { buffer.hasUnflushedActions }
    var firstUnflushedAction: UInt64? { buffer.firstUnflushedAction }
    var oldestRetained: UInt64 { buffer.oldestRetained }
    var knownStores: [String] { buffer.knownStores }
    var histories: [String: StoreHistory] { buffer.histories }
    var declarations: [String: StoreDeclaration] { buffer.declarations }
    var snapshots: [String: LogSnapshot] { buffer.snapshots }
    var poisonMarks: [PoisonMark] { buffer.poisonMarks }

    func beginEpoch(_ epoch: UInt64) { buffer.add(.epoch(epoch)) }

    /// Logs an accepted action, with its request id and, for a batch, the batch's first sequence and size. It must
    /// be flushed before the action is published.
    func append(
        sequence: UInt64, epoch: UInt64, action: BatchAction, origin: String, requestID: String, batch: (first: UInt64, size: Int)?,
        fingerprint: UInt64
    ) {
        let chain = identity.appended(sequence: sequence, action: action)
        guard let batch else {
            return buffer.add(.action(
                sequence: sequence, epoch: epoch, action: action, origin: origin, requestID: requestID, batch: nil, chain: chain,
                fingerprint: fingerprint))
        }
        buffer.addBatchAction(
            sequence: sequence, epoch: epoch, action: action, origin: origin, requestID: requestID, batch: batch, chain: chain,
            fingerprint: fingerprint)
    }

    /// Records a completed dispatch's entry, for replay: without its payload, which the action's record holds already.
    func complete(_ entry: ReplayEntry) { buffer.addCompletion(entry) }

    func recordPlans(_ plans: [String: [PlanStep]], request first: UInt64) { buffer.add(.plans(request: first, plans: plans)) }

    func recordDecision(_ output: StoreOutput, sequence: UInt64) { buffer.add(.decision(sequence: sequence, output: output)) }

    func recordPoison(_ mark: PoisonMark) {
        buffer.addPoison(mark)
        buffer.add(.poison(mark))
    }

    func recordAnswer(_ message: Message, for requestID: String, sequence: UInt64) {
        buffer.add(.answer(requestID: requestID, sequence: sequence, message: message))
    }

    func rememberStore(_ name: String, history: StoreHistory) {
        if buffer.remember(name, history: history) { buffer.add(.store(name, history)) }
    }

    func recordDeclaration(_ declaration: StoreDeclaration) {
        if buffer.remember(declaration) { buffer.add(.declaration(declaration)) }
    }

    func beginSnapshot(store: String, sequence: UInt64) { buffer.add(.snapshotBegin(store: store, sequence: sequence)) }

    func writeSnapshotChunk(store: String, sequence: UInt64, offset: UInt64, bytes: [UInt8]) {
        buffer.add(.snapshotChunk(store: store, sequence: sequence, offset: offset, bytes: bytes))
    }

    func saveSnapshot(_ snapshot: LogSnapshot) {
        buffer.snapshots[snapshot.store] = snapshot
        metrics?.snapshotSaved(store: snapshot.store)
        buffer.add(.snapshot(snapshot))
    }

    func abandonSnapshot(store: String, sequence: UInt64) { buffer.add(.snapshotAbandon(store: store, sequence: sequence)) }

    /// The rule of ``LogStorage/snapshotBytes(store:sequence:offset:count:)`` for every storage: `read` gathers the
    /// bytes from `offset` to the end it is given from the storage's chunks.
    /// - Throws: ``LogDamage`` when chunks are missing.
    func snapshotBytes(
        store: String, sequence: UInt64, offset: UInt64, count: Int, read: (_ end: UInt64) throws -> [UInt8]
    ) throws -> [UInt8]? {
        guard let snapshot = snapshots[store], snapshot.sequence == sequence else { return nil }
        guard offset < snapshot.size, count > 0 else { return [] }
        let end = min(offset + UInt64(count), snapshot.size)
        let bytes = try read(end)
        guard bytes.count == Int(end - offset) else {
            throw LogDamage(detail: "the snapshot of `\(store)` at #\(sequence) lacks bytes \(offset)…\(end)")
        }
        return bytes
    }

    /// Drops the entries up to and including `sequence`, and all but the newest `keepRequests` request ids.
    func compact(through sequence: UInt64, keepRequests: Int) {
        guard sequence >= buffer.oldestRetained else { return }
        buffer.oldestRetained = sequence + 1
        buffer.add(.compaction(through: sequence, keepRequests: keepRequests))
    }

    /// Commits every buffered write with `commit`, timed when metrics are served; then nothing waits, and the mark
    /// moves up to what was committed.
    func commitBuffer(_ commit: ([LogWrite]) throws -> Void) throws {
        guard !buffer.writes.isEmpty else { return }
        if let metrics { try metrics.timingCommit { try commit(buffer.writes) } } else { try commit(buffer.writes) }
        buffer.committed()
    }
}
