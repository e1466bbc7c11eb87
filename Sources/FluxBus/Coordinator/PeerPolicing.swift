/// The coordinator's record of input it cannot use and of the peers that send it: counts for the logs and `status`,
/// logging at a bounded rate, quarantine for a peer past the malformed-message rate, and version-mismatch answers at
/// a bounded rate. Keyed by routing id; every record expires, so peers that come and go cannot grow it without bound.
struct PeerPolicing {
    /// Messages that failed to decode or made no sense from their sender, or came from a quarantined peer.
    private(set) var malformed = 0
    /// HELLOs refused, for any reason.
    private(set) var refused = 0
    /// Messages from peers that are not members, answered with GOODBYE.
    private(set) var strangers = 0
    /// Peers quarantined so far.
    private(set) var quarantinedPeers = 0

    private let maxMalformedPerSecond: Int
    private let quarantine: Duration
    /// How long a version-mismatch REJECT holds back the next one to the same peer.
    private let rejectInterval: Duration
    private var quarantinedUntil: [[UInt8]: MonotonicTime] = [:]
    private var malformedThisSecond: [[UInt8]: Int] = [:]
    private var windowStart: MonotonicTime
    private var versionRejects: [[UInt8]: MonotonicTime] = [:]
    private var prunedAt: MonotonicTime
    private var malformedLoggedAt: MonotonicTime?
    private var refusalLoggedAt: MonotonicTime?

    init(maxMalformedPerSecond: Int, quarantine: Duration, rejectInterval: Duration, now: MonotonicTime) {
        self.maxMalformedPerSecond = maxMalformedPerSecond
        self.quarantine = quarantine
        self.rejectInterval = rejectInterval
        windowStart = now
        prunedAt = now
    }

    /// Whether everything `peer` sends is dropped unread for now; such a message counts as malformed.
    mutating func isQuarantined(_ peer: [UInt8], at now: MonotonicTime) -> Bool {
        guard let until = quarantinedUntil[peer] else { return false }
        if now < until {
            malformed += 1
            return true
        }
        quarantinedUntil[peer] = nil
        return false
    }

    /// Counts a malformed message against its sender, if known.
    /// - Returns: whether to log it (at most one line a second, so a flood cannot flood the log), and whether this
    ///   message put its sender in quarantine.
    mutating func countMalformed(from peer: [UInt8]?, at now: MonotonicTime) -> (log: Bool, quarantined: Bool) {
        malformed += 1
        var quarantined = false
        if let peer {
            if now - windowStart >= .seconds(1) {
                malformedThisSecond.removeAll(keepingCapacity: true)
                windowStart = now
            }
            malformedThisSecond[peer, default: 0] += 1
            if malformedThisSecond[peer]! > maxMalformedPerSecond {
                quarantinedUntil[peer] = now.advanced(by: quarantine)
                malformedThisSecond[peer] = nil
                quarantinedPeers += 1
                quarantined = true
            }
        }
        let log = malformedLoggedAt.map { now - $0 >= .seconds(1) } ?? true
        if log { malformedLoggedAt = now }
        return (log, quarantined)
    }

    /// Whether a peer speaking another protocol version gets a REJECT now: at most one per interval, so that two
    /// mismatched peers cannot flood each other.
    mutating func answersVersionMismatch(from peer: [UInt8], at now: MonotonicTime) -> Bool {
        guard versionRejects[peer].map({ now - $0 >= rejectInterval }) ?? true else { return false }
        versionRejects[peer] = now
        return true
    }

    /// Counts a refused HELLO; returns whether to log it (at most one line a second).
    mutating func countRefusal(at now: MonotonicTime) -> Bool {
        refused += 1
        guard refusalLoggedAt.map({ now - $0 >= .seconds(1) }) ?? true else { return false }
        refusalLoggedAt = now
        return true
    }

    mutating func countStranger() { strangers += 1 }

    /// Once a second, forgets version-mismatch REJECTs older than their interval and quarantines that have ended.
    mutating func prune(at now: MonotonicTime) {
        guard now - prunedAt >= .seconds(1) else { return }
        prunedAt = now
        versionRejects = versionRejects.filter { now - $0.value < rejectInterval }
        quarantinedUntil = quarantinedUntil.filter { now < $0.value }
    }
}
