@testable import FluxBus
import FluxBusProtocol

/// What a simulated coordinator's log holds on disk: the production ``MemoryLog``'s tables, which survive the
/// coordinator's crashes. Only ``SimulatedLog``'s flushes change them, so a crash loses exactly what was not flushed.
final class SimulatedDisk {
    /// What the log committed; a damage fault replaces it, a restore puts a copy back.
    private(set) var tables = MemoryLogTables()
    /// The mark beside the log, as the page cache holds it: it survives a crash of the coordinator.
    let mark = SimulatedMark()
    /// Snapshots recorded while their chunks were not all there or did not match their checksum: must stay 0.
    var incompleteSnapshotsRecorded: [String] = []
    /// Flushes that failed, for the report.
    var failedFlushes = 0
    /// Reads that failed (``FaultPlan/readFailure``).
    var failedReads = 0
    /// What every tick's ``SimulatedLog/syncIfBatched()`` throws while set: a storage error for a batch-mode sync
    /// that failed, any other for a WAL truncation that did.
    var checkpointFailure: (any Error)?
    /// Calls of ``SimulatedLog/syncIfBatched()`` that threw.
    var failedCheckpoints = 0
    /// The highest sequence ever committed and synced: what no damage undoes, for the invariant that a log is never
    /// silently shortened.
    private(set) var highestCommitted: UInt64 = 0
    /// What the disk held at the last sync, while a commit waits for the next one: a power cut may put it back.
    private var lastSynced: (tables: MemoryLogTables, mark: LogHighWater?, snapshots: [String: LogSnapshot])?

    var oldestSequence: UInt64? { tables.actions.first?.sequence }
    var newestSequence: UInt64? { tables.actions.last?.sequence }
    var requests: [UInt64: MemoryLogTables.Request] { tables.requests }
    var histories: [String: StoreHistory] { tables.histories }
    var poison: [PoisonMark] { tables.poison }
    var snapshots: [String: LogSnapshot] { tables.snapshots }
    var chunks: [String: [UInt64: SnapshotChunks]] { tables.chunks }
    var epochs: [UInt64] { tables.epochs }
    var decisions: [UInt64: [StoreOutput]] { tables.decisions }

    func action(at sequence: UInt64) -> MemoryLogTables.Action? { tables.index(of: sequence).map { tables.actions[$0] } }

    /// A copy of what the disk holds, for a damage fault to restore; the mark is not part of it.
    var contents: MemoryLogTables { tables.copy() }

    func restore(_ contents: MemoryLogTables) { tables = contents }

    /// Damage: the actions after `sequence` are gone (with their entries), the rest of the log stays.
    func removeActions(after sequence: UInt64) {
        tables.actions.removeLast(tables.actions.count - tables.firstIndex(notBelow: sequence + 1))
    }

    /// The bytes of a recorded snapshot's chunks, if they are exactly its size.
    func bytes(of store: String, at sequence: UInt64) -> [UInt8]? {
        guard let snapshot = tables.snapshots[store], snapshot.sequence == sequence else { return nil }
        let bytes = tables.chunks[store]?[sequence]?.read(from: 0, to: snapshot.size) ?? []
        return UInt64(bytes.count) == snapshot.size ? bytes : nil
    }

    /// The newest action a power cut would leave: the newest at the last sync while one is owed.
    var newestSynced: UInt64? { lastSynced.map { $0.tables.actions.last?.sequence } ?? newestSequence }

    /// Whether a power cut now would keep the action at `sequence`, and its request's plans.
    func keepsForGood(_ sequence: UInt64) -> (action: Bool, plans: Bool) {
        let kept = lastSynced?.tables ?? tables
        guard let index = kept.index(of: sequence) else { return (false, false) }
        let request = kept.actions[index].batchFirst ?? sequence
        return (true, kept.plans[request] != nil)
    }

    /// The epochs a power cut now would keep.
    var syncedEpochs: [UInt64] { lastSynced?.tables.epochs ?? tables.epochs }

    /// The decisions a power cut now would keep: those of the last sync while one is owed.
    var syncedDecisions: [UInt64: [StoreOutput]] { lastSynced?.tables.decisions ?? tables.decisions }

    /// Before a commit that the coordinator syncs later: what a power cut before that sync goes back to.
    func committing() {
        if lastSynced == nil { lastSynced = (contents, mark.mark, tables.snapshots) }
    }

    /// The sync after one or more commits: they are on the disk for good.
    func synced(through sequence: UInt64) {
        guard let before = lastSynced else { return }
        lastSynced = nil
        committed(sequence, recordedSince: before.snapshots)
    }

    /// Power is cut before the sync: the commits since the last one are lost, or kept when `keeping` (the disk
    /// happened to write them, so they are as good as synced). Returns whether anything was lost.
    func powerCut(keeping: Bool) -> Bool {
        guard let before = lastSynced else { return false }
        if keeping {
            synced(through: newestSequence ?? 0)
            return false
        }
        lastSynced = nil
        tables = before.tables
        mark.mark = before.mark
        return true
    }

    /// After a sync: moves the high-water mark up, and checks the snapshots it recorded against their chunks.
    private func committed(_ sequence: UInt64, recordedSince before: [String: LogSnapshot]) {
        highestCommitted = max(highestCommitted, sequence)
        for (store, snapshot) in tables.snapshots where before[store] != snapshot {
            let bytes = tables.chunks[store]?[snapshot.sequence]?.read(from: 0, to: snapshot.size) ?? []
            if UInt64(bytes.count) != snapshot.size || StateDigest.fnv1a64(bytes) != snapshot.checksum {
                incompleteSnapshotsRecorded.append("\(store)@\(snapshot.sequence)")
            }
        }
    }
}

/// The ``LogStorage`` port over a ``SimulatedDisk``: the production ``MemoryLog`` over the disk's tables, with what a
/// disk adds. A flush may fail (when the fault plan says so) and then applies nothing, as a failed SQLite transaction;
/// a mark lies beside the log; and it poses as a log in a data directory, so that the engine treats it as durable.
final class SimulatedLog: LogStorage {
    let disk: SimulatedDisk
    /// Asked before every flush that has something to write, and every sync that has something to sync: true fails it.
    private let flushFails: () -> Bool
    /// Asked before every read of a request, entries, an entry's chain or a snapshot's bytes: true fails it.
    private let readFails: () -> Bool
    private let log: MemoryLog
    private var lastAppended: UInt64 = 0
    /// The newest action the last commit held, while its sync is owed.
    private var owedThrough: UInt64?

    let directory: String? = "/simulated"
    let path: String? = "/simulated/log.sqlite"
    let sync = LogSync.always
    var hasUnflushedActions: Bool { log.hasUnflushedActions }
    var firstUnflushedAction: UInt64? { log.firstUnflushedAction }
    var oldestRetained: UInt64 { log.oldestRetained }
    var knownStores: [String] { log.knownStores }
    var histories: [String: StoreHistory] { log.histories }
    var declarations: [String: StoreDeclaration] { log.declarations }
    var poisonMarks: [PoisonMark] { log.poisonMarks }
    var snapshots: [String: LogSnapshot] { log.snapshots }

    /// Sees every request's plans as they are logged, with the stores the log knows then.
    var onPlans: (([String: [PlanStep]], _ known: [String]) -> Void)?

    init(disk: SimulatedDisk, flushFails: @escaping () -> Bool, readFails: @escaping () -> Bool = { false }) {
        self.disk = disk
        self.flushFails = flushFails
        self.readFails = readFails
        log = MemoryLog(sync: .always, tables: disk.tables, mark: disk.mark, busID: "5157" + String(repeating: "0", count: 28))
    }

    /// Opening syncs what a crashed predecessor left unsynced, as the SQLite log's does.
    func recover() throws -> LogRecovery {
        let recovered = try log.recover()
        disk.synced(through: recovered.lastSequence)
        return recovered
    }

    func flush() throws {
        _ = try flushDeferringSync()
        try syncCommitted()
    }

    /// A commit reaches the disk's cache at once and is synced by ``syncCommitted()``, as the SQLite log with
    /// `--sync always` does: a crash of the coordinator loses none of it, a power cut in between may.
    func flushDeferringSync() throws -> Bool {
        guard !log.buffer.writes.isEmpty else { return false }
        if flushFails() {
            disk.failedFlushes += 1
            throw BusError(code: .storage, message: "simulated: the disk refused the write")
        }
        disk.committing()
        try log.flush()
        owedThrough = lastAppended
        return true
    }

    /// A sync may fail too, as an fsync that reports an I/O error: then nothing in the commit is known durable.
    func syncCommitted() throws {
        guard let through = owedThrough else { return }
        owedThrough = nil
        if flushFails() {
            disk.failedFlushes += 1
            throw BusError(code: .storage, message: "simulated: the disk's fsync failed")
        }
        disk.synced(through: through)
    }

    func append(
        sequence: UInt64, epoch: UInt64, action: BatchAction, origin: String, requestID: String, batch: (first: UInt64, size: Int)?,
        fingerprint: UInt64
    ) {
        lastAppended = sequence
        log.append(sequence: sequence, epoch: epoch, action: action, origin: origin, requestID: requestID, batch: batch, fingerprint: fingerprint)
    }

    // The rest is the MemoryLog's.
    func beginEpoch(_ epoch: UInt64) { log.beginEpoch(epoch) }
    func complete(_ entry: ReplayEntry) { log.complete(entry) }
    func recordDecision(_ output: StoreOutput, sequence: UInt64) { log.recordDecision(output, sequence: sequence) }
    func recordPlans(_ plans: [String: [PlanStep]], request first: UInt64) {
        onPlans?(plans, log.knownStores)
        log.recordPlans(plans, request: first)
    }
    func recordAnswer(_ message: Message, for requestID: String, sequence: UInt64) { log.recordAnswer(message, for: requestID, sequence: sequence) }
    func recordPoison(_ mark: PoisonMark) { log.recordPoison(mark) }
    func rememberStore(_ name: String, history: StoreHistory) { log.rememberStore(name, history: history) }
    func recordDeclaration(_ declaration: StoreDeclaration) { log.recordDeclaration(declaration) }
    func beginSnapshot(store: String, sequence: UInt64) { log.beginSnapshot(store: store, sequence: sequence) }
    func writeSnapshotChunk(store: String, sequence: UInt64, offset: UInt64, bytes: [UInt8]) {
        log.writeSnapshotChunk(store: store, sequence: sequence, offset: offset, bytes: bytes)
    }
    func saveSnapshot(_ snapshot: LogSnapshot) { log.saveSnapshot(snapshot) }
    func abandonSnapshot(store: String, sequence: UInt64) { log.abandonSnapshot(store: store, sequence: sequence) }
    func snapshotBytes(store: String, sequence: UInt64, offset: UInt64, count: Int) throws -> [UInt8]? {
        try failReadIfDue()
        return try log.snapshotBytes(store: store, sequence: sequence, offset: offset, count: count)
    }
    func compact(through sequence: UInt64, keepRequests: Int) { log.compact(through: sequence, keepRequests: keepRequests) }
    func syncIfBatched() throws {
        guard let failure = disk.checkpointFailure else { return }
        disk.failedCheckpoints += 1
        throw failure
    }
    func request(_ requestID: String) throws -> LoggedRequest? {
        try failReadIfDue()
        return try log.request(requestID)
    }
    func loggedEntry(at sequence: UInt64) throws -> LoggedEntry? {
        try failReadIfDue()
        return try log.loggedEntry(at: sequence)
    }
    func entries(in range: ClosedRange<UInt64>, maximum: Int) throws -> [ReplayEntry] {
        try failReadIfDue()
        return try log.entries(in: range, maximum: maximum)
    }

    /// Served as the SQLite log serves a FETCH: each entry a row in wire layout without its payload, the payload
    /// spliced back in. Every REPLAY of a simulation goes through the splicer, and its replicas apply what it made.
    func encodedEntries(in range: ClosedRange<UInt64>, maximum: Int) throws -> EncodedEntries {
        let codec = Codec()
        var splicer = EntrySplicer(limits: codec.limits)
        for entry in try entries(in: range, maximum: maximum) {
            var row = entry
            row.payload = []
            _ = try codec.encodeEntry(row).withUnsafeBufferPointer { row in
                try entry.payload.withUnsafeBufferPointer { try splicer.append(row: row, payload: $0) }
            }
        }
        return splicer.entries
    }

    private func failReadIfDue() throws {
        guard readFails() else { return }
        disk.failedReads += 1
        throw BusError(code: .storage, message: "simulated: a read of the log failed")
    }
}

extension MemoryLogTables {
    /// Another set of tables holding the same, for a damage fault's backup.
    func copy() -> MemoryLogTables {
        let copy = MemoryLogTables()
        (copy.actions, copy.requests, copy.requestSequences) = (actions, requests, requestSequences)
        (copy.epochs, copy.busID) = (epochs, busID)
        (copy.stores, copy.histories, copy.declarations, copy.poison) = (stores, histories, declarations, poison)
        (copy.snapshots, copy.chunks, copy.decisions, copy.plans) = (snapshots, chunks, decisions, plans)
        return copy
    }
}

/// The simulated `log.mark`: survives a coordinator's crash like the page cache does; a fault may leave it while
/// the log behind it is damaged.
final class SimulatedMark: LogMarkStore {
    let path = "/simulated/log.mark"
    var mark: LogHighWater?
    func read() throws -> LogHighWater? { mark }
    func write(_ mark: LogHighWater, durably: Bool) throws { self.mark = mark }
}
