import Flux
import FluxBusProtocol
import Logging

/// Input the coordinator cannot use: counted and logged at a bounded rate by ``PeerPolicing``; a member that sends
/// too much of it is written off.
extension CoordinatorEngine {
    func dropMalformed(_ reason: String, from routingID: [UInt8]?) {
        let (log, quarantined) = policing.countMalformed(from: routingID, at: now)
        if log {
            logger.warning("dropped a malformed message", metadata: [
                "reason": "\(reason)", "peer": "\(routingID.map(Self.describe) ?? "?")",
                "malformedTotal": "\(policing.malformed)",
            ])
        }
        guard quarantined, let routingID else { return }
        logger.warning("quarantined a peer: too many malformed messages; everything it sends is dropped unread", metadata: [
            "peer": "\(Self.describe(routingID))", "limitPerSecond": "\(configuration.maxMalformedPerSecond)",
            "seconds": "\(configuration.quarantine.components.seconds)",
        ])
        if let workerID = workerByRoutingID[routingID] { markLost(workerID, reason: "quarantined for malformed messages") }
    }

    /// A client's request that the decoder refused for its size gets an ERROR naming the limit and the size, instead
    /// of no answer at all. The answer carries the request id when it could be read; one over the limit cannot be
    /// echoed (the client's decoder would refuse it too), so that ERROR has an empty request id.
    func answerIfOverLimit(_ error: DecodeError, frames: ArraySlice<[UInt8]>, to routingID: [UInt8]) {
        guard error.code == .lengthOverLimit || error.code == .frameTooLarge, let header = codec.requestHeader(of: frames)
        else { return }
        let problem: String
        if error.code == .frameTooLarge {
            problem = "its body of \(error.value ?? 0) bytes is over the limit of \(error.limit ?? 0) bytes for one message; "
                + "send less in one request: a smaller payload, or fewer actions per batch"
        } else if header.requestID == nil {
            problem = "its request id of \(header.requestIDBytes) bytes is over the limit of \(codec.limits.maxStringBytes) bytes; "
                + "use a shorter one (a UUID is 36 bytes)"
        } else {
            problem = "its field `\(error.field ?? "?")` is \(error.value ?? 0) long, over the limit of \(error.limit ?? 0)"
                + ((error.field ?? "").hasSuffix("payload")
                    ? " bytes; send a smaller payload (this coordinator takes at most \(configuration.maxPayloadBytes) bytes, --max-payload-bytes)"
                    : "; send less")
        }
        send(.error(.init(requestID: header.requestID ?? "", code: .invalidRequest, message: "\(header.command) refused: \(problem)")),
             to: routingID)
    }
}
