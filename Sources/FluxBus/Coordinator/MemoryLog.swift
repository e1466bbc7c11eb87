import FluxBusProtocol

/// The coordinator's log when it has no data directory (`--in-memory`): the ``ActionLog``'s behaviour over Swift
/// collections (``MemoryLogTables``), without SQL. A commit still waits for ``flush()``: until then, what was written
/// is not read back, exactly as with the SQLite log, and the engine's "commit, then publish" holds alike.
///
/// What nothing reads in memory is not kept: the origin and epoch of each action, and the times of each record.
/// It is only ever used on the coordinator's I/O thread.
final class MemoryLog: BufferedLog {
    let sync: LogSync
    let identity: LogIdentity
    let buffer = LogBuffer()
    /// What was committed.
    let tables: MemoryLogTables
    var metrics: LogMetrics?

    /// In memory there is no directory and no file; a restart starts a new bus.
    var directory: String? { nil }
    var path: String? { nil }

    /// - Parameters:
    ///   - sync: what `--sync` said, for nothing but to be reported as the SQLite log in memory does.
    ///   - tables: what an earlier log over the same tables committed (the simulator's disk); empty in a coordinator.
    ///   - mark: the mark a log with a directory keeps beside it (the simulator's); nil in memory.
    init(sync: LogSync, tables: MemoryLogTables = MemoryLogTables(), mark: (any LogMarkStore)? = nil,
         busID: String = LogMark.newBusID()) {
        self.sync = sync
        self.tables = tables
        identity = LogIdentity(mark: mark, newBusID: busID)
    }

    func recover() throws -> LogRecovery {
        var (recovered, holding, chainTail) = try tables.recovery()
        buffer.recovered(recovered, oldestRetained: holding.oldestRetained, snapshots: tables.snapshots)
        recovered.opening = try identity.open(
            holding: holding, chainTail: chainTail, logFile: "in memory", newBus: false,
            chainAt: { [tables] in tables.loggedEntry(at: $0)?.chain },
            recordBus: { [tables] in tables.busID = $0 })
        recovered.busID = identity.busID
        return recovered
    }

    /// Applies every buffered write to ``tables``.
    /// - Throws: ``BusError`` (`storage`) for an action logged out of order, which would fail the SQLite log too.
    func flush() throws {
        do {
            try commitBuffer { try tables.commit($0) }
        } catch {
            throw BusError(code: .storage, message: "cannot write the in-memory log: \(error). The coordinator stops rather "
                + "than publish what it could not log")
        }
        try identity.committed()
    }

    /// Memory has no disk to sync: every commit is as durable as it gets.
    func flushDeferringSync() throws -> Bool {
        try flush()
        return false
    }

    func syncCommitted() throws {}

    /// Nothing to sync in memory.
    func syncIfBatched() {}

    /// The empty id is never looked up: the SQLite log's index of ids leaves it out (``RequestIDIndex``).
    func request(_ requestID: String) throws -> LoggedRequest? {
        guard !requestID.isEmpty else { return nil }
        return tables.request(requestID).map { LoggedRequest(answer: $0.answer, fingerprint: $0.fingerprint, actionType: $0.actionType) }
    }

    func loggedEntry(at sequence: UInt64) throws -> LoggedEntry? { tables.loggedEntry(at: sequence) }

    func entries(in range: ClosedRange<UInt64>, maximum: Int) throws -> [ReplayEntry] { tables.entries(in: range, maximum: maximum) }

    func snapshotBytes(store: String, sequence: UInt64, offset: UInt64, count: Int) throws -> [UInt8]? {
        try snapshotBytes(store: store, sequence: sequence, offset: offset, count: count) { [tables] end in
            tables.chunks[store]?[sequence]?.read(from: offset, to: end) ?? []
        }
    }
}
