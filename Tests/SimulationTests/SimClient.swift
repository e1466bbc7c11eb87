import Flux
@testable import FluxBus
import FluxBusProtocol

/// A client of the simulated bus: it sends its actions one at a time, each under its own request id, and retries a
/// request under the same id until it gets a result, as a careful client does.
struct SimClient {
    struct Request {
        let requestID: String
        let actionID: UInt32
        let payload: [UInt8]
        var sentAt: Int64
    }

    let index: Int
    private var remaining: Int
    private(set) var request: Request?
    var generation = 0
    var routingID: [UInt8] { Array("client-\(index)".utf8) }
    var isDone: Bool { remaining == 0 && request == nil }
    /// A request unanswered this long is sent again, under the same id.
    static let retryAfter: Int64 = 1_500_000

    init(index: Int, actions: Int) {
        self.index = index
        remaining = actions
    }

    mutating func wake(at now: Int64, cluster: SimCluster) {
        if let request, now - request.sentAt >= Self.retryAfter {
            send(request, at: now, cluster: cluster)
        } else if request == nil, remaining > 0 {
            remaining -= 1
            let actionID = cluster.checker.newActionID()
            let payload = Array("{\"id\":\(actionID)}".utf8)
            let request = Request(requestID: "c\(index)-\(actionID)", actionID: actionID, payload: payload, sentAt: now)
            cluster.checker.requested(request)
            send(request, at: now, cluster: cluster)
        }
        if !isDone { cluster.schedule(.clientWake(index), after: request == nil ? 5_000 : Self.retryAfter / 3) }
    }

    private mutating func send(_ request: Request, at now: Int64, cluster: SimCluster) {
        var request = request
        request.sentAt = now
        self.request = request
        cluster.send(.dispatch(.init(requestID: request.requestID, actionType: Sim.append.name, payload: request.payload, error: nil)),
                     from: self)
    }

    mutating func receive(_ message: Message, at now: Int64, cluster: SimCluster) {
        switch message {
        case .result(let result) where result.requestID == request?.requestID:
            cluster.checker.answered(request!, sequence: result.sequence, outcomes: result.outcomes)
            request = nil
            cluster.schedule(.clientWake(index), after: 1_000)
        case .error(let error) where error.requestID == request?.requestID:
            // Busy, or shutting down: not accepted; try again soon under the same id.
            request!.sentAt = now - Self.retryAfter + 200_000
        default:
            break
        }
    }
}
