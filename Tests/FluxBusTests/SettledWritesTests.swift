import Foundation
import FluxBusProtocol
import GRDB
import Testing

@testable import FluxBus

/// SQLite's application of the journal leaves out the plans and decisions that the same transaction completes
/// (``SettledWrites``): no read could see them. What a restart still needs, it writes: the plan of a request with an
/// action left to run, and the decision of a dispatch in flight.
@Suite("Writes settled within one application of the journal")
struct SettledWritesTests {
    static let action = BatchAction(actionType: "counter.add", payload: Array(#"{"by":1}"#.utf8))
    static let plan = [action.actionType: [PlanStep(store: "counter")]]

    static func entry(_ sequence: UInt64) -> ReplayEntry {
        ReplayEntry(
            epoch: 1, sequence: sequence, actionType: action.actionType, payload: action.payload, plan: [PlanStep(store: "counter")],
            outputs: [StoreOutput(store: "counter", status: .ok, output: [1])])
    }

    /// The keys of a table's rows, in order.
    static func keys(_ column: String, of table: String, in directory: URL) throws -> [UInt64] {
        try DatabaseQueue(path: directory.appendingPathComponent(ActionLog.fileName).path).read { db in
            try UInt64.fetchAll(db, sql: "SELECT \(column) FROM \(table) ORDER BY \(column)")
        }
    }

    /// Lock-step dispatches 1 to 5 and a batch of three at 6 to 8, each committed to the journal alone; the
    /// dispatches through 6 and 7 complete, 8 does not, and 8 has a decision.
    @Test func onlyWhatARestartCouldReadReachesSQLite() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fluxbus-settled-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: directory) }
        do {
            let log = try ActionLog(directory: directory.path, sync: .off)
            _ = try log.recover()
            log.beginEpoch(1)
            for sequence in UInt64(1)...5 {
                log.append(sequence: sequence, epoch: 1, action: Self.action, origin: "c", requestID: "r\(sequence)", batch: nil,
                           fingerprint: sequence)
                log.recordPlans(Self.plan, request: sequence)
                log.recordDecision(StoreOutput(store: "counter", status: .ok, output: [UInt8(sequence)]), sequence: sequence)
                _ = try log.flushDeferringSync()
                log.complete(Self.entry(sequence))
            }
            for sequence in UInt64(6)...8 {
                log.append(sequence: sequence, epoch: 1, action: Self.action, origin: "c", requestID: "batch", batch: (first: 6, size: 3),
                           fingerprint: 99)
            }
            log.recordPlans(Self.plan, request: 6)
            _ = try log.flushDeferringSync()
            log.complete(Self.entry(6))
            log.complete(Self.entry(7))
            log.recordDecision(StoreOutput(store: "counter", status: .ok, output: [8]), sequence: 8)
            _ = try log.flushDeferringSync()
            #expect(log.journaledRecords == 7, "every commit waits in the journal, to be applied in one transaction")
            try log.applyJournal()
        }
        #expect(try Self.keys("sequence", of: "action", in: directory) == Array(1...5))
        #expect(try Self.keys("last", of: "action_run", in: directory) == [8], "the batch's actions, one run")
        #expect(try Self.keys("request", of: "plan", in: directory) == [6], "the batch has an action left to run; the others completed")
        #expect(try Self.keys("sequence", of: "decision", in: directory) == [8], "only the dispatch in flight keeps its decision")

        let recovered = try ActionLog(directory: directory.path, sync: .off).recover()
        #expect(recovered.lastCompleted == 7)
        #expect(recovered.pending.map(\.sequence) == [8])
        #expect(recovered.plans[6] == Self.plan, "the restart plans the batch's last action as the first run did")
        #expect(recovered.decisions[8] == [StoreOutput(store: "counter", status: .ok, output: [8])])
    }

    /// A plan whose request's actions an earlier transaction logged cannot be shown dead, and is written even when
    /// its request completes in this one.
    @Test func aPlanApartFromItsActionsIsWritten() throws {
        var actions = [LogWrite.action(
            sequence: 1, epoch: 1, action: Self.action, origin: "c", requestID: "r1", batch: nil, chain: 0, fingerprint: 1)]
        let later = [LogWrite.plans(request: 1, plans: Self.plan), .completion(Self.entry(1), last: 1),
                     .decision(sequence: 1, output: StoreOutput(store: "counter", status: .ok))]
        #expect(!SettledWrites([later]).isDead(later[0]))
        #expect(SettledWrites([later]).isDead(later[2]))
        actions += later
        #expect(SettledWrites([actions]).isDead(later[0]))
        #expect(!SettledWrites([actions]).isDead(actions[0]), "an action is never dead")
    }
}
