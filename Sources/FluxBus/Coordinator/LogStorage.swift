import FluxBusProtocol

/// The coordinator's durable log as its engine sees it.
///
/// Writes are buffered, and ``flush()`` commits everything buffered in one transaction: the group commit. The engine
/// flushes before it publishes an action it logged, so no action reaches a worker before its record is committed.
/// The shell hands the engine the SQLite ``ActionLog`` over a data directory, or the ``MemoryLog`` without one
/// (`--in-memory`: no SQL); the simulation tests hand it a simulated disk that loses what was not flushed when its
/// coordinator crashes, and that can fail a flush.
///
/// The engine calls this port synchronously: on the coordinator's one I/O thread a commit has no one to overlap with,
/// and "commit, then publish" stays a matter of statement order (docs/ARCHITECTURE.md, "The engines").
protocol LogStorage: AnyObject {
    /// The data directory, or nil when the log lives in memory.
    var directory: String? { get }
    /// The log file, for `status`; nil in memory.
    var path: String? { get }
    var sync: LogSync { get }
    /// Whether an action waits to be committed: it must be, before it is published.
    var hasUnflushedActions: Bool { get }
    /// The sequence of the first action waiting to be committed; nil when none waits.
    var firstUnflushedAction: UInt64? { get }
    /// The first sequence still in the log.
    var oldestRetained: UInt64 { get }
    /// Every store a worker ever declared, in the order first seen: compaction waits for a snapshot of each.
    var knownStores: [String] { get }
    /// The history each known store replays (``StoreHistory/none`` for a store known before histories were kept).
    var histories: [String: StoreHistory] { get }
    /// The declaration each known store's replicas last joined with (none for a store known before they were kept).
    var declarations: [String: StoreDeclaration] { get }
    var snapshots: [String: LogSnapshot] { get }
    /// Every poison mark, in sequence order (few: each is a handler that crashed its worker again and again).
    var poisonMarks: [PoisonMark] { get }

    /// What the log held when it was opened.
    func recover() throws -> LogRecovery
    func beginEpoch(_ epoch: UInt64)
    /// Logs an accepted action, with its request id and, for a batch, the batch's first sequence and size, and the
    /// request's ``RequestFingerprint``. The log extends its chain with it.
    func append(
        sequence: UInt64, epoch: UInt64, action: BatchAction, origin: String, requestID: String, batch: (first: UInt64, size: Int)?,
        fingerprint: UInt64)
    /// Records a request's plans (action type → plan), keyed by its first sequence, before its first ACTION goes out.
    func recordPlans(_ plans: [String: [PlanStep]], request first: UInt64)
    /// Records a store's outcome for a dispatch in flight that stores wait for, before it is released to them.
    func recordDecision(_ output: StoreOutput, sequence: UInt64)
    /// Records a completed dispatch's entry, for replay.
    func complete(_ entry: ReplayEntry)
    /// Marks a completed action poisoned for a store: no replica of it runs it from now on.
    func recordPoison(_ mark: PoisonMark)
    /// Records the answer (RESULT or BATCH_RESULT) owed to a request id, for retries.
    func recordAnswer(_ message: Message, for requestID: String, sequence: UInt64)
    /// Remembers a store name, so that compaction waits for its snapshot, with the history its replicas replay; a
    /// store already known keeps the history it had.
    func rememberStore(_ name: String, history: StoreHistory)
    /// Records the declaration a remembered store's replica joined with, when it differs from the one recorded: a
    /// restarted coordinator plans with it until a replica of the store joins again.
    func recordDeclaration(_ declaration: StoreDeclaration)
    /// Starts receiving a snapshot of `store` at `sequence`: drops any chunks an abandoned attempt left of it.
    func beginSnapshot(store: String, sequence: UInt64)
    /// Stores one chunk of a snapshot being received. It is not the store's snapshot until ``saveSnapshot(_:)``.
    func writeSnapshotChunk(store: String, sequence: UInt64, offset: UInt64, bytes: [UInt8])
    /// Records a snapshot whose chunks were all written and whose checksum was verified as the store's snapshot,
    /// replacing the previous one and dropping its chunks. Only then does compaction rely on it.
    func saveSnapshot(_ snapshot: LogSnapshot)
    /// Drops the chunks of a snapshot that was not received whole; the store's recorded snapshot stays.
    func abandonSnapshot(store: String, sequence: UInt64)
    /// `count` bytes (fewer at the end) from `offset` of the store's recorded snapshot at `sequence`; nil when that
    /// is not the store's snapshot (any more).
    func snapshotBytes(store: String, sequence: UInt64, offset: UInt64, count: Int) throws -> [UInt8]?
    /// Drops the entries up to and including `sequence`, and all but the newest `keepRequests` request ids.
    func compact(through sequence: UInt64, keepRequests: Int)
    /// Commits every buffered write in one transaction, durably as the sync mode says.
    /// - Throws: ``BusError`` (`storage`): the coordinator must stop rather than publish what it could not log.
    func flush() throws
    /// Commits like ``flush()``, but leaves the disk sync that `--sync always` owes to ``syncCommitted()``: the
    /// actions just committed can be published while the disk syncs. A process crash loses nothing committed here
    /// (the page cache holds it); a power cut before the sync may.
    /// - Returns: whether a sync is owed.
    func flushDeferringSync() throws -> Bool
    /// Makes durable what ``flushDeferringSync()`` committed; nothing when no sync is owed.
    /// - Throws: ``BusError`` (`storage`) when the disk cannot sync: the coordinator must stop.
    func syncCommitted() throws
    /// In batch mode, syncs what was committed since the last call.
    /// - Throws: ``BusError`` (`storage`) when that sync fails: the coordinator must stop. Any other error is a
    ///   housekeeping failure that loses nothing, which the coordinator reports and survives.
    func syncIfBatched() throws
    /// What the log knows of a request id: its fingerprint, and its answer once it completed.
    func request(_ requestID: String) throws -> LoggedRequest?
    /// What the log recorded of the action at `sequence`, to hold a worker's history to; nil when it no longer holds
    /// that action.
    func loggedEntry(at sequence: UInt64) throws -> LoggedEntry?
    /// Completed entries with sequences in `range`, at most `maximum` of them, oldest first.
    func entries(in range: ClosedRange<UInt64>, maximum: Int) throws -> [ReplayEntry]
    /// The same entries in wire layout, as a REPLAY carries them: what FETCH serves.
    func encodedEntries(in range: ClosedRange<UInt64>, maximum: Int) throws -> EncodedEntries
}

extension LogStorage {
    /// A log that does not keep entries in wire layout encodes them.
    func encodedEntries(in range: ClosedRange<UInt64>, maximum: Int) throws -> EncodedEntries {
        EncodedEntries(try entries(in: range, maximum: maximum))
    }
}

/// A log whose records contradict each other, or lack what they promise: it cannot be read back.
struct LogDamage: Error, CustomStringConvertible {
    let detail: String
    var description: String { detail }
}

/// A request whose actions were logged and not all completed: the coordinator dispatches the rest again after a
/// restart.
struct LogPending {
    /// The first action not completed.
    let sequence: UInt64
    let requestID: String
    var actions: [BatchAction]
    /// For a batch, its first sequence and size as accepted; nil and 0 for a DISPATCH.
    let batchFirst: UInt64?
    let batchSize: Int
    /// The request's ``RequestFingerprint``; nil in a log from before fingerprints.
    let fingerprint: UInt64?
}

/// What a log recorded of one action, to hold a worker's history to (docs/PROTOCOL.md, HELLO).
struct LoggedEntry: Equatable {
    /// The log chain after it (appendix D).
    let chain: UInt64
    /// The epoch it was logged in: a worker that applied its sequence in an earlier epoch applied another entry, one
    /// the log lost.
    let epoch: UInt64
}

/// A request id the log knows.
struct LoggedRequest {
    /// Its RESULT or BATCH_RESULT; nil until it completed.
    var answer: Message?
    /// What it asked for; nil in a log from before fingerprints.
    var fingerprint: UInt64?
    /// Its first action's type, to name in a refusal.
    var actionType: String?
}

/// A store's snapshot as one live replica reported it, for replicas that join after compaction: its metadata only.
/// The bytes stay in the log, in chunks (``LogStorage/snapshotBytes(store:sequence:offset:count:)``), so the
/// coordinator's memory does not grow with the stores' states.
struct LogSnapshot: Hashable {
    let store: String
    let sequence: UInt64
    /// The store's state digest as the replica reported it.
    let digest: UInt64
    /// FNV-1a 64 of the state's bytes.
    let checksum: UInt64
    let size: UInt64
    let worker: String
    /// The log chain at `sequence`, recorded with the snapshot (the action's row may be compacted away later); 0 for
    /// a snapshot recorded before the log kept it.
    let chain: UInt64

    /// The id a worker PULLs this snapshot's bytes under: `snapshot/SEQUENCE/STORE`.
    var transfer: String { "snapshot/\(sequence)/\(store)" }

    /// The store and sequence a snapshot transfer id names, or nil when it is not one.
    static func parse(transfer: String) -> (store: String, sequence: UInt64)? {
        let parts = transfer.split(separator: "/", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == "snapshot", let sequence = UInt64(parts[1]), !parts[2].isEmpty else { return nil }
        return (String(parts[2]), sequence)
    }
}

/// What the log held when it was opened.
struct LogRecovery {
    var lastSequence: UInt64 = 0
    var lastCompleted: UInt64 = 0
    var lastEpoch: UInt64 = 0
    /// The bus the log belongs to.
    var busID = ""
    /// What opening the log decided about its mark.
    var opening = LogIdentity.Decision.inMemory
    /// Records of `log.journal` that SQLite applied at opening: commits a previous run made that its tables did not
    /// hold yet.
    var journalRecordsApplied = 0
    var pending: [LogPending] = []
    /// Every store name a worker has declared, in the order first seen.
    var stores: [String] = []
    /// The history each of them replays.
    var histories: [String: StoreHistory] = [:]
    /// The recorded declarations of the stores, in the order first seen: those recorded before v10 have none.
    var declarations: [StoreDeclaration] = []
    /// Every poison mark, in sequence order.
    var poisonMarks: [PoisonMark] = []
    /// The outcomes released for actions not completed, by sequence: dispatched again, they must release the same.
    var decisions: [UInt64: [StoreOutput]] = [:]
    /// The plans of the requests not completed, by their first sequence: dispatched again, they name the same stores.
    var plans: [UInt64: [String: [PlanStep]]] = [:]
}

extension LogRecovery {
    /// Adds an action that was logged and not completed, in sequence order: consecutive actions of one batch make one
    /// request again, to be dispatched as it was accepted.
    mutating func addPending(
        sequence: UInt64, action: BatchAction, requestID: String, batchFirst: UInt64?, batchSize: Int, fingerprint: UInt64? = nil
    ) {
        if let batchFirst, let last = pending.indices.last, pending[last].batchFirst == batchFirst {
            pending[last].actions.append(action)
        } else {
            pending.append(LogPending(
                sequence: sequence, requestID: requestID, actions: [action], batchFirst: batchFirst, batchSize: batchSize,
                fingerprint: fingerprint))
        }
    }
}
