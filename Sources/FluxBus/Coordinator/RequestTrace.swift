import FluxBusProtocol

/// What the coordinator records of a traced DISPATCH (one that carries a `traceparent`), on its own clock: when it
/// arrived, when the log committed it, when its ACTION went out, when each ACK arrived with the worker's own figures,
/// when each RELEASE went out after the commit of the outcome it carries, and when the RESULT left.
///
/// Only a traced request has one, so an untraced dispatch reads no clock and allocates nothing for tracing. It is a
/// class because the queue entry, the request in flight and the list of requests awaiting a commit share it.
final class RequestTrace {
    /// A worker's ACK and the figures it carried.
    struct AckArrival {
        let worker: String
        let arrivedAt: MonotonicTime
        let timings: [StoreTiming]
    }

    /// A RELEASE sent to a worker, after the commit that recorded the outcome it carries.
    struct ReleaseSent {
        let store: String
        let worker: String
        let commit: ClosedRange<MonotonicTime>?
        let sentAt: MonotonicTime
    }

    let context: TraceContext
    let receivedAt: MonotonicTime
    /// The commit that logged the action.
    var commit: ClosedRange<MonotonicTime>?
    /// With `--sync always`, the fsync of that commit, which runs while the ACTION travels.
    var sync: ClosedRange<MonotonicTime>?
    var publishedAt: MonotonicTime?
    var sequence: UInt64 = 0
    var plan: [PlanStep] = []
    var acks: [AckArrival] = []
    var releases: [ReleaseSent] = []

    init(context: TraceContext, receivedAt: MonotonicTime) {
        self.context = context
        self.receivedAt = receivedAt
    }
}
