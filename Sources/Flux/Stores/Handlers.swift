/// A store's map from action names to handlers, in place of one big switch.
///
/// Build it once, as a static property, with ``on(_:_:)``:
///
/// ```swift
/// static let handlers = Handlers<CityStore>()
///     .on(Flight.cityUpdate) { store, action, _ in store.state.city = action.payload.city }
///     .on(Flight.countryUpdate) { store, action, context in
///         let country = try context.output(of: "country", as: CountryState.self)
///         store.state.city = defaultCity(for: country?.country)
///     }
/// ```
public struct Handlers<S: Store>: Sendable {
    typealias Handler = @Sendable (S, AnyAction, DispatchContext) throws -> Void

    private var table: [String: Handler] = [:]
    private var fallback: Handler?

    /// An empty map.
    public init() {}

    /// Adds the handler for one action type; a later handler for the same name replaces an earlier one.
    public func on<Payload>(
        _ type: ActionType<Payload>,
        _ handler: @escaping @Sendable (S, Action<Payload>, DispatchContext) throws -> Void
    ) -> Handlers<S> {
        var copy = self
        copy.table[type.name] = { store, action, context in
            let payload = try action.payload(as: Payload.self)
            try handler(store, Action(ActionType(action.name), payload, error: action.error), context)
        }
        return copy
    }

    /// Adds a handler for every action that has no handler of its own. A store with one declares to the bus that
    /// it handles all action types.
    public func onAnyAction(
        _ handler: @escaping @Sendable (S, AnyAction, DispatchContext) throws -> Void
    ) -> Handlers<S> {
        var copy = self
        copy.fallback = handler
        return copy
    }

    /// The action names with a handler of their own, sorted.
    public var actionNames: [String] { table.keys.sorted() }

    /// Whether every action reaches this store.
    public var handlesAllActions: Bool { fallback != nil }

    /// Whether an action of this name reaches this store.
    public func handles(_ actionName: String) -> Bool {
        fallback != nil || table[actionName] != nil
    }

    /// Runs the handler for `action`, if there is one.
    /// - Returns: whether a handler ran.
    /// - Throws: whatever the handler throws, or ``StoreError`` when the payload does not fit.
    @discardableResult
    func handle(_ action: AnyAction, in store: S, context: DispatchContext) throws -> Bool {
        guard let handler = table[action.name] ?? fallback else { return false }
        try handler(store, action, context)
        return true
    }
}
