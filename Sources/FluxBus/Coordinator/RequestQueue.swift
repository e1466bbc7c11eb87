import FluxBusProtocol

/// How a request id sent again by a requester was taken, while a request with that id waits or is in flight.
enum RetryAdmission: Equatable {
    /// Another requester now waits for the answer too.
    case joined
    /// This requester (the same connection) already waits: it gets the answer once.
    case alreadyWaiting
    /// As many requesters as allowed already wait: refuse this one.
    case full
    /// No waiting request has that id.
    case notWaiting

    /// Adds `requester` to `waiting` unless it is there already or `maximum` wait. The request id is stored once,
    /// shared by every waiter, so a waiter costs only its routing id.
    static func admit(_ requester: Requester, to waiting: inout [Requester], maximum: Int) -> RetryAdmission {
        guard !waiting.contains(where: { $0.routingID == requester.routingID }) else { return .alreadyWaiting }
        guard waiting.count < maximum else { return .full }
        waiting.append(Requester(routingID: requester.routingID, requestID: waiting.first?.requestID ?? requester.requestID))
        return .joined
    }
}

/// The requests waiting behind the one in flight, their actions already logged and given sequences; and the
/// requesters that sent the same request id again while it waited, so that each gets the answer.
struct RequestQueue {
    /// A DISPATCH or DISPATCH_BATCH waiting its turn.
    struct Entry {
        /// The first action's sequence, given when the request was accepted and logged, so the log holds the order
        /// before anything runs.
        let sequence: UInt64
        var requesters: [Requester]
        let requestID: String
        let actions: [BatchAction]
        let isBatch: Bool
        /// The batch as accepted; after a restart, `actions` may be only the part that had not completed.
        let batchFirst: UInt64
        let batchSize: Int
        /// Action type → its plan, once logged: fixed before the first ACTION is published, and after a restart the
        /// plans the previous run published, so that a sequence always names the same stores.
        var plans: [String: [PlanStep]]?
        /// What the request asked for (``RequestFingerprint``); nil for one logged before fingerprints.
        var fingerprint: UInt64?
        /// What is measured of a traced DISPATCH; nil for an untraced one, and for one recovered from the log.
        var trace: RequestTrace? = nil
    }

    /// At most this many actions wait; past it clients are told the bus is busy.
    let limit: Int
    private var entries = FIFO<Entry>()
    /// A request id waiting: every requester waiting for it (the first, and those that sent the same id again
    /// meanwhile), and what it asked for.
    private struct Waiting {
        var requesters: [Requester]
        let askedFor: LoggedRequest
    }

    /// The request ids waiting: a lookup instead of a scan of the queue for every DISPATCH.
    private var waiting: [String: Waiting] = [:]
    /// Actions waiting: the limit counts actions, so that batches cannot grow the queue without bound.
    private(set) var actionCount = 0

    init(limit: Int) { self.limit = limit }

    var isEmpty: Bool { entries.isEmpty }
    var count: Int { entries.count }

    /// The next request's first sequence.
    var nextSequence: UInt64? { entries.elements.first?.sequence }

    /// How many actions the next request holds.
    var nextSize: Int? { entries.elements.first?.actions.count }

    /// Whether `count` more actions fit.
    func hasRoom(for count: Int) -> Bool { actionCount + count <= limit }

    mutating func push(_ entry: Entry) {
        entries.push(entry)
        actionCount += entry.actions.count
        if !entry.requestID.isEmpty {
            waiting[entry.requestID] = Waiting(
                requesters: entry.requesters,
                askedFor: LoggedRequest(fingerprint: entry.fingerprint, actionType: entry.actions.first?.actionType))
        }
    }

    /// Adds a requester that sent a waiting request's id again: each connection once, up to `maximum` per request.
    mutating func addRetry(_ requester: Requester, maximum: Int) -> RetryAdmission {
        guard waiting[requester.requestID] != nil else { return .notWaiting }
        return RetryAdmission.admit(requester, to: &waiting[requester.requestID]!.requesters, maximum: maximum)
    }

    /// Gives the next request its plans, made by `plan`, unless it has them; returns them and the request's first
    /// sequence when it did.
    mutating func planNext(_ plan: ([BatchAction]) -> [String: [PlanStep]]) -> (first: UInt64, plans: [String: [PlanStep]])? {
        var made: (UInt64, [String: [PlanStep]])?
        entries.updateFirst { entry in
            guard entry.plans == nil else { return }
            entry.plans = plan(entry.actions)
            made = (entry.batchFirst, entry.plans!)
        }
        return made
    }

    /// What a waiting request id asked for; nil when no request with that id waits.
    func waiting(_ requestID: String) -> LoggedRequest? { waiting[requestID]?.askedFor }

    /// The next request, with every requester that asked for it.
    mutating func pop() -> Entry? {
        guard var next = entries.pop() else { return nil }
        actionCount -= next.actions.count
        if let waiters = waiting.removeValue(forKey: next.requestID) { next.requesters = waiters.requesters }
        return next
    }

    /// Every requester waiting for a queued request, oldest request first.
    var waitingRequesters: [Requester] {
        entries.elements.flatMap { entry in entry.requestID.isEmpty ? entry.requesters : waiting[entry.requestID]?.requesters ?? [] }
    }
}
