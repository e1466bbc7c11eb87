import FluxBusProtocol

/// One buffered write of a log, as ``LogBuffer`` keeps them until the group commit. ``ActionLog`` runs each as SQL
/// (LogWrite+SQL.swift), ``MemoryLog`` applies it to Swift collections (``MemoryLogTables``), by the same rules.
enum LogWrite {
    case epoch(UInt64)
    case action(
        sequence: UInt64, epoch: UInt64, action: BatchAction, origin: String, requestID: String, batch: (first: UInt64, size: Int)?,
        chain: UInt64, fingerprint: UInt64)
    /// A batch's consecutive actions, each with its chain value (``LogBuffer/addBatchAction``): one write, one row.
    case actions(ActionRun)
    /// Completed dispatches `entry.sequence` through `last`, whose entries are alike but for their sequences and
    /// payloads (``LogBuffer/addCompletion(_:)``): `entry` is the first, without its payload, which the action's write
    /// holds already. A batch's completions are one write, and one row.
    case completion(ReplayEntry, last: UInt64)
    case decision(sequence: UInt64, output: StoreOutput)
    case plans(request: UInt64, plans: [String: [PlanStep]])
    case answer(requestID: String, sequence: UInt64, message: Message)
    case store(String, StoreHistory)
    /// The declaration a store's replicas joined with last (its `lastApplied` 0): after a restart the coordinator
    /// plans with it until a replica joins again.
    case declaration(StoreDeclaration)
    case poison(PoisonMark)
    case snapshot(LogSnapshot)
    case snapshotBegin(store: String, sequence: UInt64)
    case snapshotChunk(store: String, sequence: UInt64, offset: UInt64, bytes: [UInt8])
    case snapshotAbandon(store: String, sequence: UInt64)
    case compaction(through: UInt64, keepRequests: Int)

    /// The `request` row an action's write adds: a DISPATCH's, or a batch's first action's (a batch's id belongs to its
    /// first action; the others add none). Nil for an action without a request id, and for every other write.
    var requestRow: (requestID: String, sequence: UInt64)? {
        if case .actions(let run) = self { return run.requestRow }
        guard case .action(let sequence, _, _, _, let requestID, let batch, _, _) = self, !requestID.isEmpty,
            batch.map({ $0.first == sequence }) ?? true
        else { return nil }
        return (requestID, sequence)
    }

    /// The bytes SQLite's row and the journal's record hold of what this write holds decoded: a completion's entry in
    /// the protocol's record layout, an answer's body frame. Nil for every other write.
    func encodedBlob(_ codec: Codec) -> [UInt8]? {
        switch self {
        case .completion(let entry, _): codec.encodeEntry(entry)
        case .answer(_, _, let message): codec.encodeBody(message)
        default: nil
        }
    }

    /// The sequences of the actions this write logs, in order; nil for a write of no action.
    var loggedSequences: ClosedRange<UInt64>? {
        switch self {
        case .action(let sequence, _, _, _, _, _, _, _): sequence...sequence
        case .actions(let run): run.first...run.last
        default: nil
        }
    }
}
