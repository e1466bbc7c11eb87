import Flux
@testable import FluxBus
import FluxBusProtocol

/// A client of the simulated bus: it sends its actions one at a time, each under its own request id, and retries a
/// request under the same id until it gets a result, as a careful client does. An answer with an unknown outcome is
/// asked for again under the same id, as the docs tell users to: the coordinator fills in what a replica reported
/// later, and the checker holds that answer to the truth too.
struct SimClient {
    /// One request: a DISPATCH of one action, or a DISPATCH_BATCH of several.
    struct Request {
        let requestID: String
        let actionIDs: [UInt32]
        let payloads: [[UInt8]]
        var sentAt: Int64
        var isBatch: Bool { actionIDs.count > 1 }
    }

    let index: Int
    private var remaining: Int
    private(set) var request: Request?
    var generation = 0
    var routingID: [UInt8] { Array("client-\(index)".utf8) }
    var isDone: Bool { remaining == 0 && request == nil }
    /// How many times a request was sent, retries included.
    private(set) var sends = 0
    /// The `traceparent` its single dispatches carry (empty: untraced), and how many answers carried a waterfall.
    var traceparent = ""
    private(set) var tracedAnswers = 0
    /// ERRORs with code 7 (internal) received: a coordinator that stopped with the request waiting.
    private(set) var internalErrors = 0
    /// A request unanswered this long is sent again, under the same id.
    static let retryAfter: Int64 = 1_500_000
    /// How many times an answer with an unknown outcome is asked for again before the client moves on.
    static let askAgainForUnknown = 2
    private var askedAgain = 0
    /// Whether it asks again about an unknown outcome; scenarios that count each client's sends exactly turn it off.
    var asksAgainForUnknown = true

    init(index: Int, actions: Int) {
        self.index = index
        remaining = actions
    }

    mutating func wake(at now: Int64, cluster: SimCluster) {
        if let request, now - request.sentAt >= Self.retryAfter {
            send(request, at: now, cluster: cluster)
        } else if request == nil, remaining > 0 {
            // One request in four is a batch of two to five actions.
            let size = min(remaining, Int.random(in: 0..<4, using: &cluster.random) == 0 ? Int.random(in: 2...5, using: &cluster.random) : 1)
            remaining -= size
            let actionIDs = (0..<size).map { _ in cluster.checker.newActionID() }
            let request = Request(
                requestID: "c\(index)-\(actionIDs[0])", actionIDs: actionIDs,
                payloads: actionIDs.map { Array("{\"id\":\($0)}".utf8) }, sentAt: now)
            cluster.checker.requested(request)
            send(request, at: now, cluster: cluster)
        }
        if !isDone { cluster.schedule(.clientWake(index), after: request == nil ? 5_000 : Self.retryAfter / 3) }
    }

    /// Takes over a request another client made, sending it under the same id: many connections waiting for one
    /// request id.
    mutating func adopt(_ request: Request, at now: Int64, cluster: SimCluster) {
        send(request, at: now, cluster: cluster)
        cluster.schedule(.clientWake(index), after: Self.retryAfter / 3)
    }

    private mutating func send(_ request: Request, at now: Int64, cluster: SimCluster) {
        sends += 1
        var request = request
        request.sentAt = now
        self.request = request
        let message: Message = request.isBatch
            ? .dispatchBatch(.init(requestID: request.requestID, actions: request.payloads.map {
                BatchAction(actionType: Sim.append.name, payload: $0, error: nil)
            }))
            : .dispatch(.init(
                requestID: request.requestID, actionType: Sim.append.name, payload: request.payloads[0], error: nil,
                traceparent: traceparent))
        cluster.send(message, from: self)
    }

    /// Done with the request, unless its answer had an unknown outcome and may be asked for again.
    private mutating func answered(unknown: Bool, at now: Int64, cluster: SimCluster) {
        if unknown, asksAgainForUnknown, askedAgain < Self.askAgainForUnknown {
            askedAgain += 1
            request!.sentAt = now  // sent again under the same id after `retryAfter`
        } else {
            askedAgain = 0
            request = nil
            cluster.schedule(.clientWake(index), after: 1_000)
        }
    }

    mutating func receive(_ message: Message, at now: Int64, cluster: SimCluster) {
        switch message {
        case .result(let result) where result.requestID == request?.requestID:
            if !result.trace.isEmpty { tracedAnswers += 1 }
            cluster.checker.answered(request!, sequence: result.sequence, outcomes: result.outcomes)
            answered(unknown: result.outcomes.contains { $0.status == .unknown }, at: now, cluster: cluster)
        case .batchResult(let result) where result.requestID == request?.requestID:
            cluster.checker.answered(
                request!, sequence: result.firstSequence, count: Int(result.count),
                failures: result.failures.map { ($0.sequence, $0.outcome) })
            answered(unknown: result.failures.contains { $0.outcome.status == .unknown }, at: now, cluster: cluster)
        case .error(let error) where error.requestID == request?.requestID:
            if error.code == .internal { internalErrors += 1 }
            // Busy, shutting down, or stopped on a storage failure: try again soon under the same id.
            request!.sentAt = now - Self.retryAfter + 200_000
        default:
            break
        }
    }
}
