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
}
