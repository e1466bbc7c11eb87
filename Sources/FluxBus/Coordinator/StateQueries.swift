/// Clients' STATE_REQUESTs forwarded to a replica, waiting for its STATE: the coordinator answers each client once,
/// with the state, the replica's error, or a timeout.
struct StateQueries {
    private struct Query {
        let requester: Requester
        let deadline: MonotonicTime
    }

    private var pending: [String: Query] = [:]
    private var issued = 0

    /// Records a forwarded request; returns the query id the replica is asked under.
    mutating func open(for requester: Requester, until deadline: MonotonicTime) -> String {
        issued += 1
        let queryID = "q\(issued)"
        pending[queryID] = Query(requester: requester, deadline: deadline)
        return queryID
    }

    func awaits(_ queryID: String) -> Bool { pending[queryID] != nil }

    /// Takes the answer to a query: who asked, if it was pending.
    mutating func close(_ queryID: String) -> Requester? { pending.removeValue(forKey: queryID)?.requester }

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
