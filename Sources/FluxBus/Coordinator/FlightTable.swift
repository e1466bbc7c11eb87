import FluxBusProtocol

/// The requests in flight and their dispatches: one for a DISPATCH, several for a DISPATCH_BATCH, published when the
/// request starts and completed strictly in sequence order across requests. Requests are answered in that order too.
///
/// A request starts while others are in flight when the dispatches not yet completed, with its own, stay within
/// ``CoordinatorConfiguration/maxInFlight`` (``admits(_:limit:)``): workers apply every sequence in order anyway, so a
/// busy bus keeps them supplied instead of idling between requests.
struct FlightTable {
    /// A request in flight, and where its dispatches begin in ``flights``.
    private struct Started {
        var request: CurrentRequest
        var start: Int
    }

    /// Oldest first.
    private var requests: [Started] = []
    /// The dispatches of every request in ``requests``, in sequence order.
    private var flights: [InFlightDispatch] = []
    /// How many of ``flights``, from the first, have completed.
    private var completed = 0
    /// Per worker, the newest sequence in flight already sent to it again directly (``indicesToResend(to:)``).
    private var resentThrough: [String: UInt64] = [:]
    /// How many requests in flight are traced: most are not, and then nothing looks for their traces.
    private var tracedCount = 0

    var isIdle: Bool { requests.isEmpty }
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
    /// The oldest request in flight: the one whose dispatch completes next.
    var oldest: CurrentRequest? { requests.first?.request }
    /// The traces of the traced requests in flight, oldest first.
    var traces: [RequestTrace] { tracedCount == 0 ? [] : requests.compactMap(\.request.trace) }
    /// The trace of the request whose dispatch is `sequence`, if that request is traced.
    func trace(of sequence: UInt64) -> RequestTrace? {
        tracedCount == 0 ? nil : requests.lazy.compactMap(\.request.trace).first { $0.sequence == sequence }
    }
    /// Everyone waiting for a request in flight, oldest request first.
    var requesters: [Requester] { requests.flatMap(\.request.requesters) }

    subscript(index: Int) -> InFlightDispatch { flights[index] }

    /// Whether a request of `count` actions may start now: when nothing is in flight, or when the dispatches not
    /// completed, with its own, stay within `limit`.
    func admits(_ count: Int, limit: Int) -> Bool { requests.isEmpty || inFlightCount + count <= limit }

    /// Starts a request; its dispatches follow with ``append(_:)``.
    mutating func begin(_ request: CurrentRequest) {
        // Reserved only from empty: reserving a little more for each of many small requests would reallocate the
        // array every time, where appending grows it geometrically.
        if flights.isEmpty { flights.reserveCapacity(request.count) }
        requests.append(Started(request: request, start: flights.count))
        if request.trace != nil { tracedCount += 1 }
    }

    mutating func append(_ flight: InFlightDispatch) { flights.append(flight) }

    /// The position of a sequence that is in flight and not complete.
    func index(of sequence: UInt64) -> Int? {
        guard let first = flights.first?.sequence, sequence >= first else { return nil }
        let index = Int(sequence - first)
        return index >= completed && index < flights.count ? index : nil
    }

    /// A retry of a request in flight joins it: each connection once, up to `maximum` requesters.
    mutating func addRequester(_ requester: Requester, maximum: Int) -> RetryAdmission {
        guard let position = position(of: requester.requestID) else { return .notWaiting }
        return RetryAdmission.admit(requester, to: &requests[position].request.requesters, maximum: maximum)
    }

    /// The request in flight with this id, if any.
    func request(_ requestID: String) -> CurrentRequest? { position(of: requestID).map { requests[$0].request } }

    private func position(of requestID: String) -> Int? {
        guard !requestID.isEmpty else { return nil }
        // From the newest: a retry usually follows its request closely.
        return requests.lastIndex { $0.request.requestID == requestID }
    }

    /// Takes the oldest dispatch if every store in it has settled; dispatches complete in sequence order only.
    mutating func takeCompletedHead() -> InFlightDispatch? {
        guard let head, flights[head].isComplete else { return nil }
        completed += 1
        return flights[head]
    }

    /// What to send a silent worker again: the oldest open dispatch, and every later one in flight not yet sent it
    /// again. A worker that lost a batch's ACTIONs at once (one BUNDLE on PUB) so learns of them all in one round
    /// trip, and a slow one is sent each dispatch again at most once, not once per dispatch ahead of it.
    mutating func indicesToResend(to worker: String) -> [Int] {
        guard let head, let last = flights.last?.sequence else { return [] }
        let already = resentThrough[worker] ?? 0
        resentThrough[worker] = last
        return [head] + ((head + 1)..<flights.count).filter { flights[$0].sequence > already }
    }

    /// Adds a batch's outcomes that were not ok, for its BATCH_RESULT: the oldest request's, whose dispatch completed.
    mutating func recordFailures(_ failures: [BatchFailure]) {
        guard !requests.isEmpty else { return }
        requests[0].request.failures += failures
    }

    /// Ends the oldest request if all its dispatches have completed, and returns it for the answer.
    mutating func finishOldest() -> CurrentRequest? {
        guard let oldest = requests.first else { return nil }
        let end = requests.count > 1 ? requests[1].start : flights.count
        guard completed >= end else { return nil }
        requests.removeFirst()
        if oldest.request.trace != nil { tracedCount -= 1 }
        if requests.isEmpty {
            flights.removeAll(keepingCapacity: flights.count <= 64)
            resentThrough.removeAll()
        } else {
            // The completed dispatches go with their request; the positions of the others move down.
            flights.removeFirst(end)
            for position in requests.indices { requests[position].start -= end }
        }
        completed -= end
        return oldest.request
    }
}
