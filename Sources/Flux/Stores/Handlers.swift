/// A store's map from action names to handlers, in place of one big switch.
///
/// Build it once, as a static property, with ``on(_:_:)-(_,(S,Action<Payload>,DispatchContext)->Void)``:
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
    /// A handler as it was given: one that returns at once, or one that may suspend.
    @usableFromInline
    enum Handler: Sendable {
        case sync(@Sendable (S, AnyAction, DispatchContext) throws -> Void)
        case async(Awaiting<AnyAction>)
    }

    /// An async handler's type. It runs in the caller's isolation (`nonisolated(nonsending)`): the store it changes
    /// never leaves the domain that owns it.
    public typealias Awaiting<A> = nonisolated(nonsending) @Sendable (S, A, DispatchContext) async throws -> Void

    @usableFromInline var table: [String: Handler] = [:]
    private var fallback: Handler?

    /// An empty map.
    public init() {}

    /// Adds the handler for one action type; a later handler for the same name replaces an earlier one.
    // Inlinable, so that the store's module specializes the wrapper for its payload type: a generic one looked up the
    // metadata of `Action<Payload>` at run time, twice per action.
    @inlinable
    public func on<Payload>(
        _ type: ActionType<Payload>,
        _ handler: @escaping @Sendable (S, Action<Payload>, DispatchContext) throws -> Void
    ) -> Handlers<S> {
        var copy = self
        let read = JSONCoding.reader(for: Payload.self)
        copy.table[type.name] = .sync { store, action, context in
            try handler(store, try Self.typed(action, as: type, reading: read), context)
        }
        return copy
    }

    /// Adds an async handler for one action type: one that awaits (a file, a service) before it returns. It still
    /// runs alone: the next store, and the next dispatch, wait for it. On a bus worker it runs as any handler does,
    /// judged by the acknowledgement deadline; in process, ``Hub/dispatchAndWait(_:)-(AnyAction)`` runs it, and the synchronous
    /// ``Hub/dispatch(_:)-(AnyAction)`` refuses an action that reaches it.
    ///
    /// ```swift
    /// .on(Catalog.refresh) { store, action, _ in
    ///     store.state.prices = try await PriceService.fetch(action.payload.skus)
    /// }
    /// ```
    @inlinable
    public func on<Payload>(
        _ type: ActionType<Payload>,
        _ handler: @escaping Awaiting<Action<Payload>>
    ) -> Handlers<S> {
        var copy = self
        let read = JSONCoding.reader(for: Payload.self)
        copy.table[type.name] = .async { store, action, context in
            try await handler(store, try Self.typed(action, as: type, reading: read), context)
        }
        return copy
    }

    @inlinable
    static func typed<Payload>(
        _ action: AnyAction, as type: ActionType<Payload>, reading read: JSONCoding.Reader<Payload>
    ) throws -> Action<Payload> {
        Action(ActionType(action.name), try action.payload(as: Payload.self, reading: read), error: action.error)
    }

    /// Adds a handler for every action that has no handler of its own. A store with one declares to the bus that
    /// it handles all action types.
    public func onAnyAction(
        _ handler: @escaping @Sendable (S, AnyAction, DispatchContext) throws -> Void
    ) -> Handlers<S> {
        var copy = self
        copy.fallback = .sync(handler)
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

    /// Whether the handler for actions of this name is async.
    public func isAsync(_ actionName: String) -> Bool {
        if case .async = table[actionName] ?? fallback { true } else { false }
    }

    /// Whether any handler is async.
    public var hasAsyncHandlers: Bool {
        table.values.contains { if case .async = $0 { true } else { false } }
    }

    /// The handlers bound to `store`, limited to `actionNames` when given, for running without generics: unbound,
    /// each action looked up the run-time metadata of this map's handler type twice, about 650 instructions.
    func bound(to store: S, limitedTo actionNames: Set<String>?) -> BoundHandlers {
        func bind(_ handler: Handler) -> BoundHandlers.Handler {
            switch handler {
            case .sync(let run): .sync { action, context in try run(store, action, context) }
            case .async(let run): .async { action, context in try await run(store, action, context) }
            }
        }
        guard let actionNames else {
            return BoundHandlers(store: S.name, table: table.mapValues(bind), fallback: fallback.map(bind))
        }
        // A limited store's names without a handler of their own go to the fallback, and no other name does.
        var limited: [String: BoundHandlers.Handler] = [:]
        for name in actionNames { if let handler = table[name] ?? fallback { limited[name] = bind(handler) } }
        return BoundHandlers(store: S.name, table: limited, fallback: nil)
    }
}
