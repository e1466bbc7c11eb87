import Flux
import FluxBusProtocol

/// Who asked for a dispatch and wants its result.
struct Requester: Hashable {
    let routingID: [UInt8]
    let requestID: String
}

/// The request whose actions are in flight: one DISPATCH, or one DISPATCH_BATCH whose actions are all published at
/// once. The next request starts only when every one of them has completed.
struct CurrentRequest {
    let requestID: String
    var requesters: [Requester]
    let isBatch: Bool
    /// The batch as it was accepted: after a restart, the actions that completed before it are not run again.
    let firstSequence: UInt64
    let count: Int
    /// What it asked for, to refuse its id used again for something else.
    let fingerprint: UInt64?
    let actionType: String
    let startedAt: MonotonicTime
    /// The outcomes that were not `ok`, for BATCH_RESULT.
    var failures: [BatchFailure] = []
    /// What is measured of it when it is a traced DISPATCH; nil otherwise.
    var trace: RequestTrace? = nil
}

/// One dispatch between its ACTION and its completion: which replicas still owe an acknowledgement, what each store
/// did, and which dependencies were already released to the workers waiting for them.
///
/// A class: the engine reads and updates it in place many times per acknowledgement, and as a struct each of those
/// accesses could copy it, retaining and releasing a dozen fields. Only ``FlightTable`` holds it.
final class InFlightDispatch {
    let action: Message.Action
    let startedAt: MonotonicTime
    /// Only the oldest dispatch in flight has a deadline and re-sends: workers apply in order, so the others wait on it.
    var deadline: MonotonicTime
    /// Store → workers that still owe an acknowledgement for it.
    var awaiting: [String: Set<String>]
    /// Stores that handle the action but were not ready when it was published: `skipped` in every answer.
    let notReady: [Outcome]
    /// Store → each replica's result, in arrival order.
    var results: [String: [(worker: String, result: StoreResult)]] = [:]
    /// Store → replicas that were lost while the dispatch waited for them, with why.
    var lost: [String: [(worker: String, reason: String)]] = [:]
    /// Store → its settled outcome: every expected replica answered or was lost.
    var settled: [String: StoreOutput] = [:]
    /// Stores whose settled outcome went out in RELEASEs (after the log recorded it).
    var released: Set<String> = []
    /// When the next re-send to silent replicas is due, and the gap after it.
    var nextResend: MonotonicTime
    var resendGap: Duration

    init(
        action: Message.Action, startedAt: MonotonicTime, deadline: MonotonicTime, awaiting: [String: Set<String>],
        notReady: [Outcome], nextResend: MonotonicTime, resendGap: Duration
    ) {
        self.action = action
        self.startedAt = startedAt
        self.deadline = deadline
        self.awaiting = awaiting
        self.notReady = notReady
        self.nextResend = nextResend
        self.resendGap = resendGap
    }

    var sequence: UInt64 { action.sequence }
    var plan: [PlanStep] { action.plan }
    /// Every store settled and every replica answered or lost: a store's outcome can be decided (recovered from the
    /// log) before its replicas answer.
    var isComplete: Bool { settled.count == plan.count && awaiting.values.allSatisfy(\.isEmpty) }

    func step(for store: String) -> PlanStep? { plan.first { $0.store == store } }

    /// The stores in the plan that wait for `store`.
    func dependents(of store: String) -> [String] {
        plan.filter { $0.waitsFor.contains(store) }.map(\.store)
    }

    /// Records a participant's first result for a store, and says whether no other replica of the store still owes
    /// one; nil when this worker owed none (it joined after the ACTION went out, was given up on, or answered already).
    /// Each table is searched once and changed in place: this runs for every result of every ACK.
    func record(_ result: StoreResult, from worker: String) -> Bool? {
        guard let slot = awaiting.index(forKey: result.store), awaiting.values[slot].remove(worker) != nil else { return nil }
        if let existing = results.index(forKey: result.store) {
            results.values[existing].append((worker, result))
        } else {
            results[result.store] = [(worker, result)]
        }
        return awaiting.values[slot].isEmpty
    }

    /// Whether `worker` still owes a result for any store of this dispatch.
    func owesAcknowledgement(_ worker: String) -> Bool { awaiting.values.contains { $0.contains(worker) } }

    /// Workers that owe at least one acknowledgement.
    var silentWorkers: Set<String> { awaiting.values.reduce(into: Set()) { $0.formUnion($1) } }

    /// Silent workers that could have answered: they owe a store whose dependencies have all been released to them.
    /// The others only wait for a dependency's outcome, which is not theirs to give; writing them off at a deadline
    /// would lose healthy replicas along with the one that held them up.
    var silentWorkersNotWaitingForARelease: Set<String> {
        var answerable: Set<String> = []
        for (store, workers) in awaiting where !workers.isEmpty {
            guard step(for: store)?.waitsFor.allSatisfy(released.contains) ?? true else { continue }
            answerable.formUnion(workers)
        }
        return answerable
    }

    /// The outcome of a store once all its replicas have answered: failed if any failed, skipped if any skipped,
    /// ok if any succeeded (the output comes from the first that did), lost if none answered. The rule is
    /// `DependencyExecution.Settlement.merging`, the one clients' summaries use too.
    static func settle(_ store: String, results: [(worker: String, result: StoreResult)], lostReason: String) -> StoreOutput {
        let merged = DependencyExecution.Settlement.merging(results.map(\.result.settlement))
        switch merged {
        case .ok?:
            return StoreOutput(store: store, status: .ok, output: results.first { $0.result.status == .ok }?.result.output)
        case .failed(let message)?, .skipped(let message)?:
            return StoreOutput(store: store, status: merged!.status, message: message)
        case .lost?, nil:
            return StoreOutput(store: store, status: .unknown, message: lostReason)
        }
    }
}
