/// How one store fared with one dispatch (wire type `status`, one byte).
public enum OutcomeStatus: UInt8, CaseIterable, Sendable, Hashable, CustomStringConvertible, WireEnum {
    /// The handler ran and returned.
    case ok = 0
    /// The handler threw; the message says why.
    case failed = 1
    /// The store did not run because a store it waits for failed, was skipped or was lost.
    case skipped = 2
    /// Not known yet: no replica answered in time (it was lost, or none was live). The action is in the log, so every
    /// replica applies it when it returns or catches up; the request id's recorded result shows the outcome once a
    /// replica reports it. It never means "not applied".
    case unknown = 3
    /// Never applied by any replica: its handler crashed the worker running it, again and again (`--poison-after`
    /// times), so the coordinator marked the action poisoned for this store. Every replica skips it alike; the stores
    /// waiting for it keep reading the outcome recorded when it completed. Protocol version 4.
    case poisoned = 4

    /// `ok`, `failed`, `skipped`, `unknown` or `poisoned`.
    public var description: String {
        switch self {
        case .ok: "ok"
        case .failed: "failed"
        case .skipped: "skipped"
        case .unknown: "unknown"
        case .poisoned: "poisoned"
        }
    }
}

/// A worker's standing with the coordinator, as STATUS reports it (wire type `worker-state`, one byte).
public enum WorkerState: UInt8, CaseIterable, Sendable, Hashable, CustomStringConvertible, WireEnum {
    /// Welcomed, caught up and counted in every acknowledgement set.
    case live = 0
    /// Welcomed, still fetching history; not yet counted.
    case catchingUp = 1
    /// Silent past its deadline; its stores left the live set until it joins again.
    case lost = 2
    /// Said GOODBYE.
    case gone = 3

    /// `live`, `catching-up`, `lost` or `gone`, as `fluxbus status --json` prints it.
    public var description: String {
        switch self {
        case .live: "live"
        case .catchingUp: "catching-up"
        case .lost: "lost"
        case .gone: "gone"
        }
    }
}
