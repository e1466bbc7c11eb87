import FluxBusProtocol

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
        /// What the request asked for (``RequestFingerprint``); nil for one logged before fingerprints.
        var fingerprint: UInt64?
    }

    /// At most this many actions wait; past it clients are told the bus is busy.
    let limit: Int
    private var entries = FIFO<Entry>()
    /// The request ids waiting, with the requesters that sent the same id again meanwhile: a lookup instead of a scan
    /// of the queue for every DISPATCH.
    private var retries: [String: [Requester]] = [:]
    /// What each waiting request id asked for, and its first action type.
    private var askedFor: [String: LoggedRequest] = [:]
    /// Actions waiting: the limit counts actions, so that batches cannot grow the queue without bound.
    private(set) var actionCount = 0

    init(limit: Int) { self.limit = limit }

    var isEmpty: Bool { entries.isEmpty }
    var count: Int { entries.count }

    /// Whether `count` more actions fit.
    func hasRoom(for count: Int) -> Bool { actionCount + count <= limit }

    mutating func push(_ entry: Entry) {
        entries.push(entry)
        actionCount += entry.actions.count
        if !entry.requestID.isEmpty {
            retries[entry.requestID] = []
            askedFor[entry.requestID] = LoggedRequest(fingerprint: entry.fingerprint, actionType: entry.actions.first?.actionType)
        }
    }

    /// Adds a requester that sent a waiting request's id again, up to `maximum` per request.
    /// - Returns: false when no request with that id waits.
    mutating func addRetry(_ requester: Requester, maximum: Int) -> Bool {
        guard let waiting = retries[requester.requestID] else { return false }
        if waiting.count < maximum { retries[requester.requestID]!.append(requester) }
        return true
    }

    /// What a waiting request id asked for; nil when no request with that id waits.
    func waiting(_ requestID: String) -> LoggedRequest? { askedFor[requestID] }

    /// The next request, with every requester that asked for it.
    mutating func pop() -> Entry? {
        guard var next = entries.pop() else { return nil }
        actionCount -= next.actions.count
        next.requesters += retries.removeValue(forKey: next.requestID) ?? []
        askedFor[next.requestID] = nil
        return next
    }
}
