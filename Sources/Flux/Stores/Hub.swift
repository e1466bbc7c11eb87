/// Creates, owns and runs typed stores in process, in dependency order.
///
/// Registering a store type makes the hub create the instance; ``store(of:)`` finds it again by type. A dispatch
/// runs every store that handles the action, each after the stores it waits for, and hands each handler the outputs
/// of its dependencies. A store whose handler throws is reported as failed, the stores waiting for it are skipped,
/// and independent stores still run; this is the same contract as the distributed bus.
///
/// ```swift
/// let hub = Hub()
/// try hub.register(CountryStore.self)
/// try hub.register(CityStore.self)        // waits for "country"
/// let report = try hub.dispatch(Action(Flight.countryUpdate, .init(country: "Japan")))
/// print(hub.store(of: CityStore.self)!.state.city)   // Tokyo
/// ```
///
/// Like the ``Dispatcher``, a hub belongs to one isolation domain.
public final class Hub {
    /// The declared dependency graph of the registered stores.
    public private(set) var graph = DependencyGraph()
    /// How many actions handlers may dispatch during one top-level dispatch before being refused.
    public var cascadeLimit = 1_000

    private var storesByName: [String: AnyStore] = [:]
    private var storesByType: [ObjectIdentifier: AnyStore] = [:]
    private var ordered: [AnyStore] = []
    private var observers: [String: [Observer]] = [:]
    private var sequence: UInt64 = 0
    private var dispatching = false
    private var cascadeQueue: [AnyAction] = []
    private var cascadeCount = 0
    private var pendingNotifications: [(store: String, error: ActionError?)] = []
    /// Whether a registered store has an async handler: only then does a synchronous dispatch look for one.
    private var hasAsyncHandlers = false

    /// Creates an empty hub.
    public init() {}

    /// Creates a store of the given type and takes ownership of it.
    /// - Returns: the new instance.
    /// - Throws: ``GraphError`` when its name is taken or it waits for a store that is not registered.
    @discardableResult
    public func register<S: Store>(_ type: S.Type) throws(GraphError) -> S {
        let store = S()
        try add([AnyStore(store)])
        return store
    }

    /// Registers several store types at once; they may wait for each other in any order. All or none.
    /// - Throws: ``GraphError`` for a cycle, an unknown dependency or a duplicate name.
    public func register(_ types: [any Store.Type]) throws(GraphError) {
        try add(types.map { AnyStore($0) })
    }

    /// The hub's instance of a store type, or nil when that type is not registered.
    public func store<S: Store>(of type: S.Type) -> S? {
        storesByType[ObjectIdentifier(type)]?.instance as? S
    }

    /// The erased store registered under a name, for code that works by name (the demo, the bus worker).
    package func anyStore(named name: String) -> AnyStore? { storesByName[name] }

    /// Whether a dispatch is running.
    public var isDispatching: Bool { dispatching }

    /// Dispatches a typed action. See ``dispatch(_:)-(AnyAction)``.
    @discardableResult
    public func dispatch<Payload>(_ action: Action<Payload>) throws -> DispatchReport {
        try dispatch(AnyAction(action))
    }

    /// Runs every store that handles `action`, in dependency order, then the actions its handlers dispatched.
    /// Observers hear of each change once the whole dispatch is over, so they may dispatch again.
    /// - Returns: each store's outcome, with the cascaded dispatches' reports.
    /// - Throws: ``FluxError/dispatchInProgress`` when called from inside a handler (use the context's `dispatch`).
    /// - Throws: ``StoreError`` (`asyncHandler`) when a store's handler for the action is async, before anything runs:
    ///   dispatch it with ``dispatchAndWait(_:)-(AnyAction)``. (One an action dispatched from a handler reaches fails that store.)
    @discardableResult
    public func dispatch(_ action: AnyAction) throws -> DispatchReport {
        guard !dispatching else { throw FluxError.dispatchInProgress }
        if hasAsyncHandlers, let store = ordered.first(where: { $0.handles(action.name) && $0.isAsync(action.name) }) {
            throw StoreError.asyncHandler(store: store.name, action: action.name)
        }
        dispatching = true
        cascadeCount = 0
        var report = run(action)
        while !cascadeQueue.isEmpty {
            report.cascades.append(run(cascadeQueue.removeFirst()))
        }
        dispatching = false
        deliverNotifications()
        return report
    }

    /// Dispatches an action as ``dispatch(_:)-(AnyAction)`` does, awaiting each async handler before the next store
    /// runs: stores still run one at a time, in dependency order, and the next dispatch waits for this one.
    /// - Throws: ``FluxError/dispatchInProgress`` when a dispatch is already running, synchronous or awaiting.
    @discardableResult
    public nonisolated(nonsending) func dispatchAndWait(_ action: AnyAction) async throws -> DispatchReport {
        guard !dispatching else { throw FluxError.dispatchInProgress }
        dispatching = true
        defer { dispatching = false }
        cascadeCount = 0
        var report = await runAwaiting(action)
        while !cascadeQueue.isEmpty {
            report.cascades.append(await runAwaiting(cascadeQueue.removeFirst()))
        }
        dispatching = false
        deliverNotifications()
        return report
    }

    /// Dispatches a typed action, awaiting async handlers. See ``dispatchAndWait(_:)-(AnyAction)``.
    @discardableResult
    public nonisolated(nonsending) func dispatchAndWait<Payload>(_ action: Action<Payload>) async throws -> DispatchReport {
        try await dispatchAndWait(AnyAction(action))
    }

    private nonisolated(nonsending) func runAwaiting(_ action: AnyAction) async -> DispatchReport {
        sequence += 1
        var run = HubRun(action, sequence: sequence, stores: ordered)
        while let (store, context) = run.next(cascade: { [unowned self] in try self.enqueueCascade($0) }) {
            do {
                _ = try await store.applyAwaiting(action, context: context)
                run.finished(store, throwing: nil)
            } catch {
                run.finished(store, throwing: error)
            }
        }
        pendingNotifications += run.notifications
        return run.report
    }

    private func add(_ stores: [AnyStore]) throws(GraphError) {
        graph = try graph.adding(stores.map { DependencyGraph.Node(name: $0.name, dependsOn: $0.dependencies) })
        for store in stores {
            storesByName[store.name] = store
            storesByType[ObjectIdentifier(type(of: store.instance))] = store
        }
        ordered = graph.order.compactMap { storesByName[$0] }
        hasAsyncHandlers = ordered.contains { $0.hasAsyncHandlers }
    }

    private func run(_ action: AnyAction) -> DispatchReport {
        sequence += 1
        var run = HubRun(action, sequence: sequence, stores: ordered)
        while let (store, context) = run.next(cascade: { [unowned self] in try self.enqueueCascade($0) }) {
            do {
                _ = try store.apply(action, context: context)
                run.finished(store, throwing: nil)
            } catch {
                run.finished(store, throwing: error)
            }
        }
        pendingNotifications += run.notifications
        return run.report
    }

    private func enqueueCascade(_ action: AnyAction) throws {
        guard cascadeCount < cascadeLimit else {
            throw StoreError(
                code: .cascadeLimit,
                message: "more than \(cascadeLimit) actions were dispatched from handlers in one dispatch; "
                    + "look for a handler that dispatches on every action, or raise Hub.cascadeLimit"
            )
        }
        cascadeCount += 1
        cascadeQueue.append(action)
    }
}

// MARK: - Observers

extension Hub {
    /// One change observer, bound weakly to its owner.
    private struct Observer {
        weak var owner: AnyObject?
        let notify: (ActionError?) -> Void
    }

    /// Calls `handler` after each dispatch in which the store of type `S` handled an action, with the store and the
    /// action's error (or the error its handler threw). The observer lives as long as `owner`: once the owner is
    /// deallocated the observer is gone, with no call to remove it. Capture the owner weakly in `handler`.
    public func observe<S: Store>(
        _ type: S.Type,
        owner: AnyObject,
        _ handler: @escaping (S, ActionError?) -> Void
    ) {
        observers[S.name, default: []].append(
            Observer(owner: owner) { [unowned self] error in
                if let store = self.store(of: S.self) { handler(store, error) }
            }
        )
    }

    /// Removes every observer that `owner` registered.
    public func removeObservers(owner: AnyObject) {
        for name in observers.keys {
            observers[name]?.removeAll { $0.owner == nil || $0.owner === owner }
        }
    }

    /// The number of live observers of a store type; observers whose owner is gone no longer count.
    public func observerCount<S: Store>(for type: S.Type) -> Int {
        pruneObservers(of: S.name)
        return observers[S.name]?.count ?? 0
    }

    private func pruneObservers(of name: String) {
        observers[name]?.removeAll { $0.owner == nil }
    }

    private func deliverNotifications() {
        let notifications = pendingNotifications
        pendingNotifications.removeAll()
        for (name, error) in notifications {
            pruneObservers(of: name)
            for observer in observers[name] ?? [] where observer.owner != nil {
                observer.notify(error)
            }
        }
    }
}
