/// What a store's handler can see and do besides its own state: the outputs of the stores it waits for, in this
/// same dispatch, and a way to dispatch further actions.
///
/// In process the outputs are the typed values; on a worker they arrive as JSON from other processes. A handler
/// reads them the same way in both cases.
public struct DispatchContext {
    /// The dispatch's sequence number: the bus's global sequence, or the hub's own count in process.
    public let sequence: UInt64
    /// The store whose handler is running.
    public let store: String
    /// True when the action comes from the bus's history rather than a live dispatch: a replica catching up, or a
    /// store new to the bus building its state from the actions dispatched before it joined (docs/GUIDE.md, "Stores
    /// that join late"). Its acknowledgement is not awaited, and a dispatch made from it is sent with the same request
    /// id as every replica's, so it still happens once. Always false in process.
    public let isReplay: Bool
    let dependencies: [String]
    let outputs: [String: Value]
    let cascade: (AnyAction) throws -> Void

    package init(
        sequence: UInt64,
        store: String,
        dependencies: [String],
        outputs: [String: Value],
        isReplay: Bool = false,
        cascade: @escaping (AnyAction) throws -> Void
    ) {
        self.sequence = sequence
        self.store = store
        self.isReplay = isReplay
        self.dependencies = dependencies
        self.outputs = outputs
        self.cascade = cascade
    }

    /// The output of a store this one waits for, as it stands after that store handled the current action.
    /// - Returns: nil when that store did not handle this action or publishes no output.
    /// - Throws: ``StoreError`` when `store` is not a declared dependency, or its output does not fit `type`.
    public func output<T: Decodable>(of store: String, as type: T.Type = T.self) throws -> T? {
        guard dependencies.contains(store) else {
            throw StoreError(
                code: .notADependency,
                message: "store `\(self.store)` read the output of `\(store)`, which it does not wait for; "
                    + "add \"\(store)\" to its dependencies"
            )
        }
        guard let value = outputs[store] else { return nil }
        do {
            return try value.decode(as: type)
        } catch {
            throw StoreError(
                code: .outputType,
                message: "the output of `\(store)` is not a valid \(T.self): \(error)"
            )
        }
    }

    /// Dispatches another action from inside a handler. It is queued and runs after the current dispatch
    /// completes, never in the middle of it.
    /// - Throws: ``StoreError`` with code `cascadeLimit` when too many actions were queued (the bus answers busy).
    public func dispatch<Payload>(_ action: Action<Payload>) throws {
        try cascade(AnyAction(action))
    }
}
