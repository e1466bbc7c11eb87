/// The writes of one SQLite transaction that are dead on arrival: a request's plans and a dispatch's decisions are read
/// only while the request is pending (``ActionLog/readDecisionsAndPlans(_:into:)``), and compaction only deletes them.
/// When the same transaction records the completion of every action they are for, no read can ever see them, so SQLite
/// need not write them: a lock-step dispatch's plan row, and a flight's two decision rows, applied with the completion
/// that follows them in the journal. What cannot be shown dead (a plan whose request's actions an earlier transaction
/// logged) is written.
struct SettledWrites {
    /// The last sequence the transaction completes: completions come in sequence order, so every sequence up to it is
    /// completed once the transaction commits.
    private var completedThrough: UInt64 = 0
    /// Each request whose first action the transaction logs, by that sequence: its last action's sequence.
    private var requestEnds: [UInt64: UInt64] = [:]

    init(_ groups: some Sequence<[LogWrite]>) {
        for writes in groups {
            for write in writes {
                switch write {
                case .completion(_, let last):
                    completedThrough = max(completedThrough, last)
                case .action(let sequence, _, _, _, _, let batch, _, _):
                    guard let batch else {
                        requestEnds[sequence] = sequence
                        continue
                    }
                    if batch.first == sequence { requestEnds[sequence] = sequence + UInt64(max(batch.size, 1)) - 1 }
                case .actions(let run) where run.first == run.batchFirst:
                    requestEnds[run.first] = run.first + UInt64(max(run.batchSize, 1)) - 1
                default:
                    break
                }
            }
        }
    }

    /// Whether no read could see the write once the transaction commits.
    func isDead(_ write: LogWrite) -> Bool {
        switch write {
        case .decision(let sequence, _):
            sequence <= completedThrough
        case .plans(let request, _):
            requestEnds[request].map { $0 <= completedThrough } ?? false
        default:
            false
        }
    }
}
