/// Clients' STATE_REQUESTs forwarded to a replica, waiting for its STATE: the coordinator answers each client once,
/// with the state, the replica's error, or a timeout. A STATE larger than one message is then relayed: the client's
/// PULLs go to the replica under the query id, and its CHUNKs back under the client's request id, so the coordinator
/// holds no state bytes (docs/PROTOCOL.md, "Transfers").
///
/// Two deadlines: the first answer may take `--state-timeout`, since the replica encodes the whole state before it
/// answers; once chunks flow, each relayed message must follow the last within `--ack-timeout`.
struct StateQueries {
    private struct Query {
        let requester: Requester
        /// The worker asked, so that its queries end when it is lost rather than at their deadline.
        let worker: String
        var deadline: MonotonicTime
        /// Once the STATE came and more bytes follow: the replica's routing id and the state's size.
        var relay: (worker: [UInt8], size: UInt64)?
    }

    private var pending: [String: Query] = [:]
    private var issued = 0

    /// Records a forwarded request to `worker`; returns the query id the replica is asked under.
    mutating func open(for requester: Requester, asking worker: String, until deadline: MonotonicTime) -> String {
        issued += 1
        let queryID = "\(Self.idPrefix)\(issued)"
        pending[queryID] = Query(requester: requester, worker: worker, deadline: deadline)
        return queryID
    }

    private static let idPrefix = "q"

    /// Whether `requestID` has the shape of this coordinator's query ids (`q1`, `q2`…): a replica's answer under such
    /// an id that is no longer pending is a late answer, not a malformed message.
    static func isQueryID(_ requestID: String) -> Bool { requestID.isIssuedID(prefix: idPrefix) }

    func awaits(_ queryID: String) -> Bool { pending[queryID] != nil }

    /// Takes the answer to a query: who asked, if it was pending.
    mutating func close(_ queryID: String) -> Requester? { pending.removeValue(forKey: queryID)?.requester }

    /// The replica's STATE came with fewer bytes than its size: keep the query open to relay the rest until
    /// `deadline`, which each relayed message pushes back. Returns who asked.
    mutating func relay(_ queryID: String, from worker: [UInt8], size: UInt64, until deadline: MonotonicTime) -> Requester? {
        guard var query = pending[queryID], query.relay == nil else { return nil }
        query.relay = (worker, size)
        query.deadline = deadline
        pending[queryID] = query
        return query.requester
    }

    /// The query a client's PULL is for: its id and the replica to ask, if it is being relayed.
    mutating func pull(from routingID: [UInt8], transfer requestID: String, until deadline: MonotonicTime)
        -> (queryID: String, worker: [UInt8])?
    {
        guard let (queryID, query) = pending.first(where: {
            $0.value.requester.routingID == routingID && $0.value.requester.requestID == requestID && $0.value.relay != nil
        }) else { return nil }
        pending[queryID]?.deadline = deadline
        return (queryID, query.relay!.worker)
    }

    /// A CHUNK from `routingID` for a relayed query: who asked; the query closes with its last chunk.
    mutating func chunk(_ queryID: String, from routingID: [UInt8], end: UInt64, until deadline: MonotonicTime) -> Requester? {
        guard let query = pending[queryID], let relay = query.relay, relay.worker == routingID else { return nil }
        if end >= relay.size {
            pending[queryID] = nil
        } else {
            pending[queryID]?.deadline = deadline
        }
        return query.requester
    }

    /// Takes the queries `worker` was asked and has not finished: who asked each. It was lost or left, so no answer,
    /// or no further chunk, will come.
    mutating func abandon(askedOf worker: String) -> [Requester] {
        let gone = pending.filter { $0.value.worker == worker }
        for id in gone.keys { pending[id] = nil }
        return gone.values.map(\.requester).sorted { $0.requestID < $1.requestID }
    }

    /// Takes every query still pending: who asked each.
    mutating func closeAll() -> [Requester] {
        defer { pending.removeAll() }
        return pending.values.map(\.requester).sorted { $0.requestID < $1.requestID }
    }

    /// Takes the queries whose deadline passed: who asked each.
    mutating func expire(at now: MonotonicTime) -> [Requester] {
        let expired = pending.filter { $0.value.deadline <= now }
        for id in expired.keys { pending[id] = nil }
        return expired.values.map(\.requester).sorted { $0.requestID < $1.requestID }
    }
}

extension String {
    /// Whether this is `prefix` followed by a decimal counter: the shape of the ids the coordinator gives its own
    /// requests to workers (``StateQueries``' `q1`, ``SnapshotRounds``' `snapshot-1`).
    func isIssuedID(prefix: String) -> Bool { hasPrefix(prefix) && UInt64(dropFirst(prefix.count)) != nil }
}
