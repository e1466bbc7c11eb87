import FluxBusProtocol

/// The request in flight and its dispatches: one for a DISPATCH, several for a DISPATCH_BATCH, all published at
/// once and completed strictly in sequence order. The next request starts only when this one has answered.
struct FlightTable {
    private(set) var request: CurrentRequest?
    private var flights: [InFlightDispatch] = []
    /// How many of ``flights``, from the first, have completed.
    private var completed = 0
    /// Per worker, the newest sequence of this request already sent to it again directly (``indicesToResend(to:)``).
    private var resentThrough: [String: UInt64] = [:]

    var isIdle: Bool { request == nil }
    /// Dispatches published and not completed.
    var inFlightCount: Int { flights.count - completed }
    /// Positions of the dispatches not completed, oldest first.
    var openIndices: Range<Int> { completed..<flights.count }
    /// The oldest dispatch not completed: the only one with a deadline and re-sends, since workers apply in order.
    var head: Int? { completed < flights.count ? completed : nil }
    /// The sequences in flight and not completed.
    var openSequences: ClosedRange<UInt64>? {
        guard let head, let last = flights.last?.sequence else { return nil }
        return flights[head].sequence...last
    }

    subscript(index: Int) -> InFlightDispatch { flights[index] }

    /// Starts a request; its dispatches follow with ``append(_:)``.
    mutating func begin(_ request: CurrentRequest) {
        precondition(self.request == nil, "one request at a time")
        self.request = request
        flights.reserveCapacity(request.count)
    }

    mutating func append(_ flight: InFlightDispatch) { flights.append(flight) }

    /// The position of a sequence that is in flight and not complete.
    func index(of sequence: UInt64) -> Int? {
        guard let first = flights.first?.sequence, sequence >= first else { return nil }
        let index = Int(sequence - first)
        return index >= completed && index < flights.count ? index : nil
    }

    /// A retry of the request in flight joins it: each connection once, up to `maximum` requesters.
    mutating func addRequester(_ requester: Requester, maximum: Int) -> RetryAdmission {
        guard request?.requestID == requester.requestID else { return .notWaiting }
        return RetryAdmission.admit(requester, to: &request!.requesters, maximum: maximum)
    }

    /// Takes the oldest dispatch if every store in it has settled; dispatches complete in sequence order only.
    mutating func takeCompletedHead() -> InFlightDispatch? {
        guard let head, flights[head].isComplete else { return nil }
        completed += 1
        return flights[head]
    }

    /// What to send a silent worker again: the oldest open dispatch, and every later one not yet sent it again in this
    /// request. A worker that lost a batch's ACTIONs at once (one BUNDLE on PUB) so learns of them all in one round trip,
    /// and a slow one is sent each dispatch of the request again at most once, not once per dispatch ahead of it.
    mutating func indicesToResend(to worker: String) -> [Int] {
        guard let head, let last = flights.last?.sequence else { return [] }
        let already = resentThrough[worker] ?? 0
        resentThrough[worker] = last
        return [head] + ((head + 1)..<flights.count).filter { flights[$0].sequence > already }
    }

    /// Whether every dispatch of the request has completed.
    var isRequestComplete: Bool { request != nil && completed == flights.count }

    /// Adds a batch's outcomes that were not ok, for its BATCH_RESULT.
    mutating func recordFailures(_ failures: [BatchFailure]) {
        request?.failures += failures
    }

    /// Ends the request once all its dispatches completed, and returns it for the answer.
    mutating func finish() -> CurrentRequest {
        precondition(isRequestComplete, "a request ends when all its dispatches have completed")
        defer {
            request = nil
            flights.removeAll(keepingCapacity: flights.count <= 64)
            completed = 0
            resentThrough.removeAll()
        }
        return request!
    }
}
