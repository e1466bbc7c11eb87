import Flux
import FluxBusProtocol

/// One replica's result for a store. A struct, not a tuple: the runtime copies a tuple of these through its generic
/// metadata, several times per completed action.
struct ReplicaResult {
    let worker: String
    let result: StoreResult
}

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
/// accesses could copy it. Only ``FlightTable`` holds it. What it knows of each store sits in ``steps``, in the
/// plan's order, found by a scan of the plan's few names rather than by hashing them: a batch holds a thousand of
/// these, and five dictionaries each made building, updating and freeing them most of a batched action's cost.
final class InFlightDispatch {
    let action: Message.Action
    let startedAt: MonotonicTime
    /// Only the oldest dispatch in flight has a deadline and re-sends: workers apply in order, so the others wait on it.
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    var deadline: MonotonicTime
    /// Stores that handle the action but were not ready when it was published: `skipped` in every answer.
    let notReady: [Outcome]
    /// Per step of the plan, at the same position.
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    private(set) var steps: [StepProgress]
    /// When the next re-send to silent replicas is due, and the gap after it.
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    var nextResend: MonotonicTime
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    var resendGap: Duration

    /// What is owed, heard and decided of one store of the plan.
    struct StepProgress {
        /// The replicas that still owe a result.
        var awaiting: [String]
        /// Each replica's result, in arrival order.
        var results: [ReplicaResult] = []
        /// Replicas that were lost while the dispatch waited for them, with why.
        var lost: [(worker: String, reason: String)] = []
        /// Its settled outcome: every expected replica answered or was lost (or it was decided before a restart).
        var settled: StoreOutput?
        /// Whether the settled outcome went out in RELEASEs (after the log recorded it).
        var released = false
    }

    /// - Parameter awaiting: per step of `action`'s plan, the replicas it waits for.
    init(
        action: Message.Action, startedAt: MonotonicTime, deadline: MonotonicTime, awaiting: [[String]],
        notReady: [Outcome], nextResend: MonotonicTime, resendGap: Duration
    ) {
        precondition(awaiting.count == action.plan.count, "one list of replicas per step of the plan")
        self.action = action
        self.startedAt = startedAt
        self.deadline = deadline
        self.steps = awaiting.map { StepProgress(awaiting: $0) }
        self.notReady = notReady
        self.nextResend = nextResend
        self.resendGap = resendGap
    }

    var sequence: UInt64 { action.sequence }
    var plan: [PlanStep] { action.plan }
    /// Every store settled and every replica answered or lost: a store's outcome can be decided (recovered from the
    /// log) before its replicas answer.
    var isComplete: Bool {
        // By index, in place: `allSatisfy` copied each step out, retaining its outcome's strings, four times per action.
        for index in steps.indices where steps[index].settled == nil || !steps[index].awaiting.isEmpty { return false }
        return true
    }

    /// The position of `store` in the plan (and in ``steps``); nil when the plan does not name it.
    func position(of store: String) -> Int? { plan.firstIndex { $0.store == store } }

    /// Fixes the outcome of the store at `position`.
    func decide(_ output: StoreOutput, at position: Int) { steps[position].settled = output }

    /// Notes that a store's outcome went out in RELEASEs.
    func markReleased(at position: Int) { steps[position].released = true }

    /// The stores in the plan that wait for `store`.
    func dependents(of store: String) -> [String] {
        plan.filter { $0.waitsFor.contains(store) }.map(\.store)
    }

    /// Whether any store in the plan waits for `store`, without listing them.
    func hasDependents(_ store: String) -> Bool { plan.contains { $0.waitsFor.contains(store) } }

    /// Records a participant's first result for a store, and says whether no other replica of the store still owes
    /// one; nil when this worker owed none (it joined after the ACTION went out, was given up on, or answered already).
    func record(_ result: StoreResult, from worker: String, at position: Int) -> Bool? {
        guard let owed = steps[position].awaiting.firstIndex(of: worker) else { return nil }
        stopAwaiting(owed, at: position)
        steps[position].results.append(ReplicaResult(worker: worker, result: result))
        return steps[position].awaiting.isEmpty
    }

    /// Removes one replica from those a step awaits. The lists start shared by every dispatch of a request, so a
    /// removal copies one; the last replica's leaves the empty list instead, with nothing to copy (the usual case:
    /// one replica per store).
    private func stopAwaiting(_ owed: Int, at position: Int) {
        if steps[position].awaiting.count == 1 {
            steps[position].awaiting = []
        } else {
            steps[position].awaiting.remove(at: owed)
        }
    }

    /// Writes a silent replica off: it owes nothing more, and each store it owed records why. Returns the positions
    /// of the stores that no replica owes a result for any more.
    func writeOff(_ worker: String, reason: @autoclosure () -> String) -> [Int] {
        var emptied: [Int] = []
        for position in steps.indices {
            guard let owed = steps[position].awaiting.firstIndex(of: worker) else { continue }
            stopAwaiting(owed, at: position)
            steps[position].lost.append((worker, reason()))
            if steps[position].awaiting.isEmpty { emptied.append(position) }
        }
        return emptied
    }

    /// Whether `worker` still owes a result for any store of this dispatch.
    func owesAcknowledgement(_ worker: String) -> Bool { steps.contains { $0.awaiting.contains(worker) } }

    /// Workers that owe at least one acknowledgement.
    var silentWorkers: Set<String> { steps.reduce(into: Set()) { $0.formUnion($1.awaiting) } }

    /// Silent workers that could have answered: they owe a store whose dependencies have all been released to them.
    /// The others only wait for a dependency's outcome, which is not theirs to give; writing them off at a deadline
    /// would lose healthy replicas along with the one that held them up.
    var silentWorkersNotWaitingForARelease: Set<String> {
        var answerable: Set<String> = []
        for (position, progress) in steps.enumerated() where !progress.awaiting.isEmpty {
            guard plan[position].waitsFor.allSatisfy(isReleased) else { continue }
            answerable.formUnion(progress.awaiting)
        }
        return answerable
    }

    /// Whether `store`'s outcome went out in RELEASEs.
    func isReleased(_ store: String) -> Bool { position(of: store).map { steps[$0].released } ?? false }

    /// The outcome of a store once all its replicas have answered: failed if any failed, skipped if any skipped,
    /// ok if any succeeded (the output comes from the first that did), lost if none answered. The rule is
    /// `DependencyExecution.Settlement.merging`, the one clients' summaries use too.
    static func settle(_ store: String, results: [ReplicaResult], lostReason: String) -> StoreOutput {
        // Every replica succeeded, the usual case, needs no merge.
        if let first = results.first, results.allSatisfy({ $0.result.status == .ok }) {
            return StoreOutput(store: store, status: .ok, output: first.result.output)
        }
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
