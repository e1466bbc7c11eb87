@testable import FluxBus
import FluxBusProtocol

/// What a simulated coordinator's log holds on disk: it survives the coordinator's crashes. Only ``SimulatedLog``'s
/// flushes change it, so a crash loses exactly what was not flushed.
final class SimulatedDisk {
    struct Row {
        let epoch: UInt64
        let action: BatchAction
        let requestID: String
        let batchFirst: UInt64?
        let batchSize: Int
        let chain: UInt64
        var entry: ReplayEntry?
    }

    var actions: [UInt64: Row] = [:]
    var requests: [String: (sequence: UInt64, result: Message?, fingerprint: UInt64?, actionType: String?)] = [:]
    var busID: String?
    /// The mark beside the log, as the page cache holds it: it survives a crash of the coordinator.
    let mark = SimulatedMark()
    var stores: [String] = []
    /// The history each store replays, recorded with its name.
    var histories: [String: StoreHistory] = [:]
    /// Poison marks, in sequence order.
    var poison: [PoisonMark] = []
    var snapshots: [String: LogSnapshot] = [:]
    /// Snapshot bytes in chunks: store → sequence → offset → bytes, as the SQLite log's `snapshot_chunk` table.
    var chunks: [String: [UInt64: [UInt64: [UInt8]]]] = [:]
    /// Snapshots recorded while their chunks were not all there or did not match their checksum: must stay 0.
    var incompleteSnapshotsRecorded: [String] = []
    var epochs: [UInt64] = []
    /// Sequence → the outcomes released for it while it was in flight, first one per store.
    var decisions: [UInt64: [StoreOutput]] = [:]
    /// A request's first sequence → its plans, as logged before its first ACTION.
    var plans: [UInt64: [String: [PlanStep]]] = [:]
    /// Flushes that failed, for the report.
    var failedFlushes = 0
    /// The highest sequence ever committed: what no damage undoes, for the invariant that a log is never silently
    /// shortened.
    private(set) var highestCommitted: UInt64 = 0

    /// What a damage fault removes and a restore puts back; the mark is not part of it.
    struct Contents {
        var actions: [UInt64: Row] = [:]
        var requests: [String: (sequence: UInt64, result: Message?, fingerprint: UInt64?, actionType: String?)] = [:]
        var stores: [String] = []
        var histories: [String: StoreHistory] = [:]
        var snapshots: [String: LogSnapshot] = [:]
        var chunks: [String: [UInt64: [UInt64: [UInt8]]]] = [:]
        var epochs: [UInt64] = []
        var busID: String?
    }

    var contents: Contents {
        Contents(
            actions: actions, requests: requests, stores: stores, histories: histories, snapshots: snapshots, chunks: chunks,
            epochs: epochs, busID: busID)
    }

    func restore(_ contents: Contents) {
        (actions, requests, stores, histories, snapshots, chunks, epochs, busID) =
            (contents.actions, contents.requests, contents.stores, contents.histories, contents.snapshots, contents.chunks,
             contents.epochs, contents.busID)
    }

    /// The bytes of a snapshot's chunks, in order, if they are contiguous from 0.
    func bytes(of store: String, at sequence: UInt64) -> [UInt8]? {
        var bytes: [UInt8] = []
        for (offset, chunk) in (chunks[store]?[sequence] ?? [:]).sorted(by: { $0.key < $1.key }) {
            guard offset == UInt64(bytes.count) else { return nil }
            bytes += chunk
        }
        return bytes
    }

    func committed(_ sequence: UInt64) { highestCommitted = max(highestCommitted, sequence) }
}

/// The ``LogStorage`` port over a ``SimulatedDisk``: writes wait in memory until ``flush()``, which applies them all
/// or (when the fault plan says so) throws and applies none, as a failed SQLite transaction does.
final class SimulatedLog: LogStorage {
    private enum Write {
        case epoch(UInt64)
        case action(UInt64, SimulatedDisk.Row, fingerprint: UInt64)
        case completion(ReplayEntry)
        case decision(UInt64, StoreOutput)
        case plans(UInt64, [String: [PlanStep]])
        case answer(String, UInt64, Message)
        case store(String, StoreHistory)
        case poison(PoisonMark)
        case snapshot(LogSnapshot)
        case snapshotBegin(String, UInt64)
        case snapshotChunk(String, UInt64, UInt64, [UInt8])
        case compaction(through: UInt64, keepRequests: Int)
    }

    let disk: SimulatedDisk
    /// Asked before every flush that has something to write: true fails it.
    private let flushFails: () -> Bool
    private var writes: [Write] = []
    private let identity: LogIdentity

    let directory: String? = "/simulated"
    let path: String? = "/simulated/log.sqlite"
    let sync = LogSync.always
    private(set) var hasUnflushedActions = false
    private(set) var oldestRetained: UInt64 = 1
    private(set) var knownStores: [String] = []
    private(set) var histories: [String: StoreHistory] = [:]
    private(set) var poisonMarks: [PoisonMark] = []
    private(set) var snapshots: [String: LogSnapshot] = [:]

    init(disk: SimulatedDisk, flushFails: @escaping () -> Bool) {
        self.disk = disk
        self.flushFails = flushFails
        identity = LogIdentity(mark: disk.mark, newBusID: "5157" + String(repeating: "0", count: 28))
    }

    func recover() throws -> LogRecovery {
        var recovered = LogRecovery()
        let sequences = disk.actions.keys.sorted()
        recovered.lastSequence = sequences.last ?? 0
        recovered.lastCompleted = sequences.last { disk.actions[$0]!.entry != nil } ?? 0
        recovered.lastEpoch = disk.epochs.max() ?? 0
        for sequence in sequences where sequence > recovered.lastCompleted {
            let row = disk.actions[sequence]!
            recovered.addPending(
                sequence: sequence, action: row.action, requestID: row.requestID, batchFirst: row.batchFirst,
                batchSize: row.batchSize)
        }
        recovered.stores = disk.stores
        recovered.histories = disk.histories
        recovered.decisions = disk.decisions.filter { $0.key > recovered.lastCompleted }
        let firsts = Set(recovered.pending.map { $0.batchFirst ?? $0.sequence })
        recovered.plans = disk.plans.filter { firsts.contains($0.key) }
        // Chunks of snapshots never recorded were being received when the last run stopped: drop them.
        for (store, bySequence) in disk.chunks {
            disk.chunks[store] = bySequence.filter { disk.snapshots[store]?.sequence == $0.key }
        }
        snapshots = disk.snapshots
        knownStores = disk.stores
        histories = disk.histories
        poisonMarks = disk.poison
        recovered.poisonMarks = disk.poison
        oldestRetained = sequences.first ?? recovered.lastSequence + 1
        let holding = LogContinuity.Holding(
            busID: disk.busID, lastSequence: recovered.lastSequence, oldestRetained: oldestRetained)
        recovered.opening = try identity.open(
            holding: holding, chainTail: sequences.last.map { disk.actions[$0]!.chain } ?? 0, logFile: path!, newBus: false,
            chainAt: { [disk] in disk.actions[$0]?.chain }, recordBus: { [disk] in disk.busID = $0 })
        recovered.busID = identity.busID
        return recovered
    }

    func beginEpoch(_ epoch: UInt64) { writes.append(.epoch(epoch)) }

    func append(
        sequence: UInt64, epoch: UInt64, action: BatchAction, origin: String, requestID: String, batch: (first: UInt64, size: Int)?,
        fingerprint: UInt64
    ) {
        let chain = identity.appended(sequence: sequence, action: action)
        writes.append(.action(sequence, .init(
            epoch: epoch, action: action, requestID: requestID, batchFirst: batch?.first, batchSize: batch?.size ?? 0, chain: chain),
            fingerprint: fingerprint))
        hasUnflushedActions = true
    }

    func complete(_ entry: ReplayEntry) { writes.append(.completion(entry)) }

    func recordDecision(_ output: StoreOutput, sequence: UInt64) { writes.append(.decision(sequence, output)) }

    func recordPlans(_ plans: [String: [PlanStep]], request first: UInt64) { writes.append(.plans(first, plans)) }

    func recordAnswer(_ message: Message, for requestID: String, sequence: UInt64) {
        writes.append(.answer(requestID, sequence, message))
    }

    func recordPoison(_ mark: PoisonMark) {
        poisonMarks.append(mark)
        poisonMarks.sort { ($0.sequence, $0.store) < ($1.sequence, $1.store) }
        writes.append(.poison(mark))
    }

    func rememberStore(_ name: String, history: StoreHistory) {
        guard !knownStores.contains(name) else { return }
        knownStores.append(name)
        histories[name] = history
        writes.append(.store(name, history))
    }

    func beginSnapshot(store: String, sequence: UInt64) { writes.append(.snapshotBegin(store, sequence)) }

    func writeSnapshotChunk(store: String, sequence: UInt64, offset: UInt64, bytes: [UInt8]) {
        writes.append(.snapshotChunk(store, sequence, offset, bytes))
    }

    func saveSnapshot(_ snapshot: LogSnapshot) {
        snapshots[snapshot.store] = snapshot
        writes.append(.snapshot(snapshot))
    }

    func abandonSnapshot(store: String, sequence: UInt64) { writes.append(.snapshotBegin(store, sequence)) }

    func snapshotBytes(store: String, sequence: UInt64, offset: UInt64, count: Int) throws -> [UInt8]? {
        guard let snapshot = snapshots[store], snapshot.sequence == sequence else { return nil }
        guard let bytes = disk.bytes(of: store, at: sequence), UInt64(bytes.count) == snapshot.size else {
            throw BusError(code: .storage, message: "simulated: the snapshot of `\(store)` lacks chunks")
        }
        let start = Int(min(offset, snapshot.size))
        return Array(bytes[start..<min(start + count, bytes.count)])
    }

    func compact(through sequence: UInt64, keepRequests: Int) {
        guard sequence >= oldestRetained else { return }
        oldestRetained = sequence + 1
        writes.append(.compaction(through: sequence, keepRequests: keepRequests))
    }

    func flush() throws {
        guard !writes.isEmpty else { return }
        if flushFails() {
            disk.failedFlushes += 1
            throw BusError(code: .storage, message: "simulated: the disk refused the write")
        }
        for write in writes { apply(write) }
        writes.removeAll()
        hasUnflushedActions = false
        try identity.committed()
    }

    func syncIfBatched() {}

    func request(_ requestID: String) throws -> LoggedRequest? {
        disk.requests[requestID].map { LoggedRequest(answer: $0.result, fingerprint: $0.fingerprint, actionType: $0.actionType) }
    }

    func chain(at sequence: UInt64) throws -> UInt64? { disk.actions[sequence]?.chain }

    func entries(in range: ClosedRange<UInt64>, maximum: Int) throws -> [ReplayEntry] {
        var entries: [ReplayEntry] = []
        var sequence = range.lowerBound
        while sequence <= range.upperBound, entries.count < maximum {
            if let entry = disk.actions[sequence]?.entry { entries.append(entry) }
            sequence += 1
        }
        return entries
    }

    private func apply(_ write: Write) {
        switch write {
        case .epoch(let epoch): disk.epochs.append(epoch)
        case .action(let sequence, let row, let fingerprint):
            disk.actions[sequence] = row
            disk.committed(sequence)
            if !row.requestID.isEmpty, row.batchFirst.map({ $0 == sequence }) ?? true {
                disk.requests[row.requestID] = (sequence, nil, fingerprint, row.action.actionType)
            }
        case .completion(let entry): disk.actions[entry.sequence]?.entry = entry
        case .plans(let first, let plans): disk.plans[first] = plans
        case .decision(let sequence, let output):
            if disk.decisions[sequence]?.contains(where: { $0.store == output.store }) != true {
                disk.decisions[sequence, default: []].append(output)
            }
        case .answer(let requestID, let sequence, let message):
            let asked = disk.requests[requestID]
            disk.requests[requestID] = (sequence, message, asked?.fingerprint, asked?.actionType)
        case .store(let name, let history):
            if !disk.stores.contains(name) {
                disk.stores.append(name)
                disk.histories[name] = history
            }
        case .poison(let mark):
            if !disk.poison.contains(where: { $0.sequence == mark.sequence && $0.store == mark.store }) {
                disk.poison.append(mark)
                disk.poison.sort { ($0.sequence, $0.store) < ($1.sequence, $1.store) }
            }
        case .snapshot(let snapshot):
            let bytes = disk.bytes(of: snapshot.store, at: snapshot.sequence)
            if bytes.map({ UInt64($0.count) != snapshot.size || StateDigest.fnv1a64($0) != snapshot.checksum }) ?? true {
                disk.incompleteSnapshotsRecorded.append("\(snapshot.store)@\(snapshot.sequence)")
            }
            disk.snapshots[snapshot.store] = snapshot
            disk.chunks[snapshot.store] = disk.chunks[snapshot.store]?.filter { $0.key == snapshot.sequence }
        case .snapshotBegin(let store, let sequence):
            if disk.snapshots[store]?.sequence != sequence { disk.chunks[store]?[sequence] = nil }
        case .snapshotChunk(let store, let sequence, let offset, let bytes):
            disk.chunks[store, default: [:]][sequence, default: [:]][offset] = bytes
        case .compaction(let through, let keepRequests):
            for sequence in disk.actions.keys where sequence <= through { disk.actions[sequence] = nil }
            for sequence in disk.decisions.keys where sequence <= through { disk.decisions[sequence] = nil }
            let kept = disk.requests.sorted { $0.value.sequence > $1.value.sequence }.prefix(keepRequests)
            disk.requests = Dictionary(uniqueKeysWithValues: kept.map { ($0.key, $0.value) })
        }
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
