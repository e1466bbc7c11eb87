import FluxBusProtocol

/// The requests in flight and their dispatches: one for a DISPATCH, several for a DISPATCH_BATCH, published when the
/// request starts and completed strictly in sequence order across requests. Requests are answered in that order too.
///
/// A request starts while others are in flight when the dispatches not yet completed, with its own, stay within
/// ``CoordinatorConfiguration/maxInFlight`` (``admits(_:limit:)``): workers apply every sequence in order anyway, so a
/// busy bus keeps them supplied instead of idling between requests.
struct FlightTable {
    /// A request in flight, and where its dispatches begin, counted over every dispatch ever appended.
    private struct Started {
        var request: CurrentRequest
        let start: Int
    }

    /// Oldest first. A queue, and ``flights`` keeps its completed front until it is long: a window of thousands of
    /// small requests would otherwise shift both arrays whole each time one is answered.
    private var requests = FIFO<Started>()
    /// Requests answered so far: a request's place in ``requests`` is its ordinal less this.
    private var finished = 0
    /// Request id → the ordinal of the request in flight under it, so that a DISPATCH is checked against the
    /// requests in flight without a scan of them.
    private var ordinals: [String: Int] = [:]
    /// The dispatches of every request in ``requests``, in sequence order, after some that completed.
    private var flights: [InFlightDispatch] = []
    /// How many dispatches were removed from the front of ``flights`` so far.
    private var dropped = 0
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
    /// Whether the oldest request in flight, the one whose dispatch completes next, is a batch.
    var oldestIsBatch: Bool { requests.read(at: 0) { $0.request.isBatch } ?? false }
    /// The traces of the traced requests in flight, oldest first.
    var traces: [RequestTrace] { tracedCount == 0 ? [] : requests.elements.compactMap(\.request.trace) }
    /// The trace of the request whose dispatch is `sequence`, if that request is traced.
    func trace(of sequence: UInt64) -> RequestTrace? {
        tracedCount == 0 ? nil : requests.elements.lazy.compactMap(\.request.trace).first { $0.sequence == sequence }
    }
    /// Everyone waiting for a request in flight, oldest request first.
    var requesters: [Requester] { requests.elements.flatMap(\.request.requesters) }

    subscript(index: Int) -> InFlightDispatch { flights[index] }

    /// Whether a request of `count` actions may start now: when nothing is in flight, or when the dispatches not
    /// completed, with its own, stay within `limit`.
    func admits(_ count: Int, limit: Int) -> Bool { requests.isEmpty || inFlightCount + count <= limit }

    /// Starts a request; its dispatches follow with ``append(_:)``.
    mutating func begin(_ request: CurrentRequest) {
        // Reserved only from empty: reserving a little more for each of many small requests would reallocate the
        // array every time, where appending grows it geometrically.
        if flights.isEmpty { flights.reserveCapacity(request.count) }
        if !request.requestID.isEmpty { ordinals[request.requestID] = finished + requests.count }
        requests.push(Started(request: request, start: dropped + flights.count))
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
        guard let ordinal = ordinals[requester.requestID] else { return .notWaiting }
        return requests.update(at: ordinal - finished) {
            RetryAdmission.admit(requester, to: &$0.request.requesters, maximum: maximum)
        } ?? .notWaiting
    }

    /// The request in flight with this id, if any.
    func request(_ requestID: String) -> CurrentRequest? {
        ordinals[requestID].map { requests.elements[requests.elements.startIndex + $0 - finished].request }
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
        // Usually none: a batch's actions mostly succeed, and reaching the request costs more than the empty list.
        guard !failures.isEmpty else { return }
        requests.updateFirst { $0.request.failures += failures }
    }

    /// Ends the oldest request if all its dispatches have completed, and returns it for the answer.
    mutating func finishOldest() -> CurrentRequest? {
        // Asked after every completed dispatch, and usually no: the positions are read in place, and the request is
        // taken out only when it ends.
        guard !requests.isEmpty else { return nil }
        let end = requests.read(at: 1) { $0.start - dropped } ?? flights.count
        guard completed >= end, let oldest = requests.pop() else { return nil }
        finished += 1
        if ordinals[oldest.request.requestID] == finished - 1 { ordinals[oldest.request.requestID] = nil }
        if oldest.request.trace != nil { tracedCount -= 1 }
        if requests.isEmpty {
            dropped += flights.count
            flights.removeAll(keepingCapacity: flights.count <= 64)
            completed = 0
            resentThrough.removeAll()
        } else if end > 1_024, end * 2 > flights.count {
            // The completed dispatches before the oldest request still in flight go; the positions of the others move
            // down. Rarely: each removal shifts the whole array.
            dropped += end
            flights.removeFirst(end)
            completed -= end
        }
        return oldest.request
    }
}
