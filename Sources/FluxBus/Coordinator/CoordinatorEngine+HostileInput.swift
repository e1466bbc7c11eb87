import Flux
import FluxBusProtocol
import Logging

/// Input the coordinator cannot use: counted, logged at a bounded rate, and answered by quarantine past a rate.
extension CoordinatorEngine {
    func dropMalformed(_ reason: String, from routingID: [UInt8]?) {
        malformedCount += 1
        if let routingID { countAgainst(routingID, at: now) }
        // At most one line per second, with the running count, so a flood cannot flood the log.
        if malformedLoggedAt.map({ now - $0 >= .seconds(1) }) ?? true {
            malformedLoggedAt = now
            logger.warning(
                "dropped a malformed message",
                metadata: [
                    "reason": "\(reason)", "peer": "\(routingID.map(Self.describe) ?? "?")",
                    "malformedTotal": "\(malformedCount)",
                ])
        }
    }

    /// Counts a malformed message against its sender, and quarantines a sender past the rate.
    func countAgainst(_ routingID: [UInt8], at now: MonotonicTime) {
        if now - malformedWindowStart >= .seconds(1) {
            malformedThisSecond.removeAll(keepingCapacity: true)
            malformedWindowStart = now
        }
        malformedThisSecond[routingID, default: 0] += 1
        guard malformedThisSecond[routingID]! > configuration.maxMalformedPerSecond else { return }
        quarantinedUntil[routingID] = now.advanced(by: configuration.quarantine)
        malformedThisSecond[routingID] = nil
        quarantinedPeers += 1
        logger.warning("quarantined a peer: too many malformed messages; everything it sends is dropped unread", metadata: [
            "peer": "\(Self.describe(routingID))", "limitPerSecond": "\(configuration.maxMalformedPerSecond)",
            "seconds": "\(configuration.quarantine.components.seconds)",
        ])
        if let workerID = workerByRoutingID[routingID] { markLost(workerID, reason: "quarantined for malformed messages") }
    }


    /// Once a second, forgets version-mismatch REJECTs older than the deadline (they no longer hold anything back)
    /// and quarantines that have ended. Both are keyed by routing id, and every new connection gets a new one: without
    /// this, peers that come and go would grow them by about 85 bytes per connection, without bound.
    func prunePeerRecords(now: MonotonicTime) {
        guard now - peerRecordsPrunedAt >= .seconds(1) else { return }
        peerRecordsPrunedAt = now
        versionRejects = versionRejects.filter { now - $0.value < deadline }
        quarantinedUntil = quarantinedUntil.filter { now < $0.value }
    }
}
