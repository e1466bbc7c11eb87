import Foundation
import FluxBusProtocol
import PropertyBased
import Testing

@testable import FluxBus

/// The in-memory log (`--in-memory`, issue 17) against the SQLite log it replaces: the same calls get the same
/// answers, before and after each flush, whatever the order of the calls.
@Suite("The in-memory log answers as the SQLite log")
struct MemoryLogTests {
    static func opened() throws -> (ActionLog, MemoryLog) {
        let sqlite = try ActionLog(directory: nil, sync: .batch)
        let memory = MemoryLog(sync: .batch)
        let (fromSQLite, fromMemory) = (try sqlite.recover(), try memory.recover())
        #expect(describe(fromSQLite) == describe(fromMemory))
        #expect(fromMemory.opening == .inMemory)
        return (sqlite, memory)
    }

    /// What a recovery holds but the bus id, which is new each time.
    static func describe(_ recovered: LogRecovery) -> [String] {
        [
            "\(recovered.lastSequence) \(recovered.lastCompleted) \(recovered.lastEpoch)",
            "pending \(recovered.pending.map { "\($0.sequence) \($0.requestID) \($0.actions) \($0.batchFirst as Any) \($0.batchSize) \($0.fingerprint as Any)" })",
            "stores \(recovered.stores) \(recovered.histories.sorted { $0.key < $1.key })", "poison \(recovered.poisonMarks)",
            "declarations \(recovered.declarations)",
            "decisions \(recovered.decisions.sorted { $0.key < $1.key })",
            "plans \(recovered.plans.sorted { $0.key < $1.key }.map { ($0.key, $0.value.sorted { $0.key < $1.key }) })",
        ]
    }

    /// Three logs: SQLite in memory, SQLite in a data directory (its commits go to the journal, ``LogJournal``, and
    /// reach SQLite later, so every read there applies them first), and the in-memory log.
    @Test("any sequence of calls gets the same answers from both, flushed or not")
    func randomCalls() async throws {
        await propertyCheck(count: 25, input: Gen.uint64()) { seed in
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fluxbus-memlog-\(UUID().uuidString.prefix(8))")
            defer { try? FileManager.default.removeItem(at: directory) }
            let (sqlite, memory) = try Self.opened()
            let journaled = try ActionLog(directory: directory.path, sync: .off)
            _ = try journaled.recover()
            var script = LogScript(seed: seed)
            for step in 1...250 {
                try script.step([sqlite, memory, journaled])
                if step % 12 == 0 {
                    let answers = LogAnswers.of(memory, through: script.lastSequence)
                    #expect(answers == LogAnswers.of(sqlite, through: script.lastSequence))
                    #expect(answers == LogAnswers.of(journaled, through: script.lastSequence))
                }
            }
            for log in [sqlite, memory, journaled] as [any LogStorage] { try log.flush() }
            let answers = LogAnswers.of(memory, through: script.lastSequence)
            #expect(answers == LogAnswers.of(sqlite, through: script.lastSequence))
            #expect(answers == LogAnswers.of(journaled, through: script.lastSequence))
        }
    }

    /// The simulator keeps a ``MemoryLogTables`` across its coordinator's crashes: opened again, it must hold what a
    /// SQLite log opened again holds.
    @Test("tables opened again recover what a SQLite log opened again recovers")
    func recovery() async throws {
        await propertyCheck(count: 12, input: Gen.uint64()) { seed in
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fluxbus-memlog-\(UUID().uuidString.prefix(8))")
            defer { try? FileManager.default.removeItem(at: directory) }
            let tables = MemoryLogTables()
            var script = LogScript(seed: seed)
            do {
                let sqlite = try ActionLog(directory: directory.path, sync: .off)
                let memory = MemoryLog(sync: .off, tables: tables)
                _ = (try sqlite.recover(), try memory.recover())
                for _ in 1...200 { try script.step([sqlite, memory]) }
                // Half the runs end as a killed coordinator does: what was not flushed is gone from both, and what was
                // flushed may be in the SQLite log's journal only.
                if seed % 2 == 0 {
                    try sqlite.flush()
                    try memory.flush()
                }
            }
            let sqlite = try ActionLog(directory: directory.path, sync: .off)
            let memory = MemoryLog(sync: .off, tables: tables)
            #expect(Self.describe(try memory.recover()) == Self.describe(try sqlite.recover()))
            #expect(LogAnswers.of(memory, through: script.lastSequence) == LogAnswers.of(sqlite, through: script.lastSequence))
        }
    }

    /// Nothing is read back before it is committed, and an action waits for a flush before it may be published.
    @Test func writesAreReadBackOnlyOnceFlushed() throws {
        let (sqlite, memory) = try Self.opened()
        let action = BatchAction(actionType: "kv.set", payload: [1, 2])
        for log in [sqlite, memory] as [any LogStorage] {
            log.append(sequence: 1, epoch: 1, action: action, origin: "c", requestID: "r1", batch: nil, fingerprint: 5)
            #expect(log.hasUnflushedActions)
            #expect(try log.request("r1") == nil)
            #expect(try log.loggedEntry(at: 1) == nil)
            try log.flush()
            #expect(!log.hasUnflushedActions)
            #expect(try log.request("r1")?.fingerprint == 5)
            #expect(try log.loggedEntry(at: 1)?.chain == LogChain.next(after: 0, sequence: 1, action: action))
        }
    }

    /// An action logged out of order is an engine bug that fails the SQLite log's commit (a duplicate key); the
    /// in-memory log refuses the whole commit too, so the coordinator stops rather than publish it.
    @Test func anActionOutOfOrderFailsTheWholeCommit() throws {
        let (sqlite, memory) = try Self.opened()
        let action = BatchAction(actionType: "kv.set", payload: [])
        for log in [sqlite, memory] as [any LogStorage] {
            log.append(sequence: 1, epoch: 1, action: action, origin: "c", requestID: "r1", batch: nil, fingerprint: 5)
            try log.flush()
            log.append(sequence: 2, epoch: 1, action: action, origin: "c", requestID: "r2", batch: nil, fingerprint: 6)
            log.append(sequence: 1, epoch: 1, action: action, origin: "c", requestID: "r3", batch: nil, fingerprint: 7)
            #expect(throws: BusError.self) { try log.flush() }
            #expect(log.hasUnflushedActions)
            #expect(try log.request("r2") == nil, "nothing of the failed commit was applied")
        }
    }

    /// Months in memory: what compaction keeps is bounded by the retained entries and the remembered request ids.
    @Test func compactionBoundsWhatTheLogKeeps() throws {
        let (_, memory) = try Self.opened()
        let action = BatchAction(actionType: "kv.set", payload: Array(repeating: 7, count: 32))
        for sequence in 1...20_000 as ClosedRange<UInt64> {
            memory.append(sequence: sequence, epoch: 1, action: action, origin: "c", requestID: "r\(sequence)", batch: nil, fingerprint: 1)
            memory.recordDecision(StoreOutput(store: "kv", status: .ok), sequence: sequence)
            memory.recordPlans(["kv.set": [PlanStep(store: "kv")]], request: sequence)
            memory.complete(ReplayEntry(epoch: 1, sequence: sequence, actionType: "kv.set", payload: action.payload, plan: [], outputs: []))
            memory.recordAnswer(.result(.init(requestID: "r\(sequence)", epoch: 1, sequence: sequence, elapsedMicros: 0, outcomes: [])), for: "r\(sequence)", sequence: sequence)
            if sequence % 1_000 == 0 { memory.compact(through: sequence - 500, keepRequests: 300) }
            try memory.flush()
        }
        let tables = memory.tables
        #expect(tables.actions.count == 500)
        #expect(tables.requests.count == 300, "the newest 300 at the last compaction, which came last")
        #expect(tables.requestSequences.count == 300, "and only their ids")
        #expect(tables.decisions.count == 500)
        #expect(tables.plans.count == 500, "the plans of the compacted requests went")
        #expect(try memory.entries(in: 1...20_000, maximum: .max).map(\.sequence) == Array(19_501...20_000))
        #expect(try memory.request("r19000") == nil)
        #expect(try memory.request("r19700") == nil)
        #expect(try memory.request("r19701")?.answer != nil)
    }
}
