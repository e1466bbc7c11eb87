import FluxBusProtocol

/// Who holds each worker id, and the other processes claiming one that is held.
///
/// A worker's routing id is its id, and the ROUTER hands a routing id over to the newest connection, so a second
/// process started with a live worker's id would silently take that worker's place. Instead, a HELLO from another
/// instance under a registration that is live or catching up (heard within the deadline) is refused: with the
/// retryable `worker id busy` while the claim is younger than the deadline plus a heartbeat (the holder may have
/// crashed, and its registration then lapses within the deadline, after which the claimant is accepted), then with
/// the final `duplicate worker`, which proves the holder alive: it was heard all along.
struct WorkerIDClaims {
    /// What the coordinator says to a HELLO claiming a held id.
    enum Verdict: Equatable {
        /// The holder may have crashed: HELLO again later.
        case retry
        /// The holder outlived a whole deadline of claims: it is alive, so stop.
        case refuse
    }

    /// The peer address each registration's HELLO came from, where the transport gave one.
    private(set) var addresses: [String: String] = [:]
    /// The first refused HELLO of the latest other instance claiming each held id.
    private var claims: [String: (instance: UInt64, since: MonotonicTime)] = [:]

    /// Records the holder of an id once its HELLO is accepted, and forgets claims on it.
    mutating func accepted(_ workerID: String, address: String?) {
        addresses[workerID] = address
        claims[workerID] = nil
    }

    /// Whether another instance claims the id.
    func isClaimed(_ workerID: String) -> Bool { claims[workerID] != nil }

    /// Forgets every claim: the coordinator did not run for a while, and forgives its workers' silence, so a claim's
    /// age would count time in which a crashed holder was not yet written off.
    mutating func forgetClaims() { claims.removeAll() }

    /// Judges a HELLO from `instance` for an id another instance holds.
    /// - Parameters:
    ///   - patience: how long the claim is answered `retry`: longer than the holder could stay registered if it had
    ///     crashed when the claim began.
    ///   - holderHeard: when the holder was last heard. Only a holder heard since the claim began, and within
    ///     `patience` of now, proves itself alive: a silent one is waiting to lapse (the simulator found a holder
    ///     kept registered past its silence by a coordinator stall's forgiveness, seed 240 of 176…575).
    mutating func claim(
        _ workerID: String, by instance: UInt64, at now: MonotonicTime, patience: Duration, holderHeard: MonotonicTime
    ) -> Verdict {
        guard let claim = claims[workerID], claim.instance == instance else {
            claims[workerID] = (instance, now)
            return .retry
        }
        let talking = holderHeard > claim.since && now - holderHeard <= patience
        return now - claim.since > patience && talking ? .refuse : .retry
    }

    /// How the holder's address is shown in a refusal.
    func describeAddress(of workerID: String) -> String { Self.describe(address: addresses[workerID]) }

    /// An address as a refusal shows it: tcp:// gives the peer's IP address; ipc:// on Linux gives
    /// `localhost:UID:GID:PID` (the socket's peer credentials), shown as the process id; inproc:// gives none.
    static func describe(address: String?) -> String {
        guard let address, !address.isEmpty else { return "an address the transport does not report (inproc://)" }
        let parts = address.split(separator: ":", omittingEmptySubsequences: false)
        if parts.count == 4, parts[0] == "localhost", parts.dropFirst().allSatisfy({ UInt32($0) != nil }) {
            return "process id \(parts[3]) on this host (ipc://, uid \(parts[1]))"
        }
        return "address \(address)"
    }
}
