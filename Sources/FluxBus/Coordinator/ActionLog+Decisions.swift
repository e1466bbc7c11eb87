import Foundation
import FluxBusProtocol
import GRDB

extension ActionLog {
    /// Reads what the previous run fixed for the requests it had not completed: the outcomes it released
    /// (``LogRecovery/decisions``) and the plans it published (``LogRecovery/plans``).
    func readDecisionsAndPlans(_ db: Database, into recovered: inout LogRecovery) throws {
        for row in try Row.fetchAll(db, sql: """
            SELECT sequence, store, status, message, output FROM decision WHERE sequence > ? ORDER BY sequence
            """, arguments: [recovered.lastCompleted]) {
            guard let status = OutcomeStatus(rawValue: row["status"]) else {
                throw LogDamage(detail: "a recorded decision for #\(row["sequence"] as UInt64) has an unknown status")
            }
            recovered.decisions[row["sequence"], default: []].append(StoreOutput(
                store: row["store"], status: status, message: row["message"], output: (row["output"] as Data?).map { [UInt8]($0) }))
        }
        let firsts = Set(recovered.pending.map { $0.batchFirst ?? $0.sequence })
        guard let lowest = firsts.min() else { return }
        for row in try Row.fetchAll(db, sql: "SELECT request, actionType, steps FROM plan WHERE request >= ?", arguments: [lowest]) {
            let request: UInt64 = row["request"]
            guard firsts.contains(request) else { continue }
            guard let steps = PlanText.decode(row["steps"]) else {
                throw LogDamage(detail: "the recorded plan of the request at #\(request) cannot be read")
            }
            recovered.plans[request, default: [:]][row["actionType"]] = steps
        }
    }
}
