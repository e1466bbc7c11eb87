/// What each store did with one dispatched action.
public struct DispatchReport: Sendable, Hashable, CustomStringConvertible {
    /// The dispatch's sequence number within its hub.
    public let sequence: UInt64
    /// The action's name.
    public let action: String
    /// The stores that took part, in the order they ran.
    public let outcomes: [StoreOutcome]
    /// Reports for the actions that handlers dispatched during this one, in the order they ran.
    public internal(set) var cascades: [DispatchReport] = []

    /// Whether every store that took part succeeded (cascades not included).
    public var succeeded: Bool { outcomes.allSatisfy { $0.status == .ok } }

    /// The outcome of one store, or nil when it did not take part.
    public subscript(store: String) -> StoreOutcome.Status? {
        outcomes.first { $0.store == store }?.status
    }

    public var description: String {
        "#\(sequence) \(action): " + outcomes.map(\.description).joined(separator: ", ")
    }
}

/// What one store did with one action.
public struct StoreOutcome: Sendable, Hashable, CustomStringConvertible {
    /// How a store's handling of an action ended.
    public enum Status: Sendable, Hashable {
        /// The handler ran and returned.
        case ok
        /// The handler threw; the message says why.
        case failed(String)
        /// The handler did not run because a store it waits for failed or was skipped; the message names it.
        case skipped(String)
    }

    /// The store's name.
    public let store: String
    /// How its handling ended.
    public let status: Status

    public init(store: String, status: Status) {
        self.store = store
        self.status = status
    }

    public var description: String {
        switch status {
        case .ok: "\(store) ok"
        case .failed(let message): "\(store) failed (\(message))"
        case .skipped(let reason): "\(store) skipped (\(reason))"
        }
    }
}
