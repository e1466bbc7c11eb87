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
    @discardableResult
    public func dispatch(_ action: AnyAction) throws -> DispatchReport {
        guard !dispatching else { throw FluxError.dispatchInProgress }
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

    private func add(_ stores: [AnyStore]) throws(GraphError) {
        graph = try graph.adding(stores.map { DependencyGraph.Node(name: $0.name, dependsOn: $0.dependencies) })
        for store in stores {
            storesByName[store.name] = store
            storesByType[ObjectIdentifier(type(of: store.instance))] = store
        }
        ordered = graph.order.compactMap { storesByName[$0] }
    }

    private func run(_ action: AnyAction) -> DispatchReport {
        sequence += 1
        var outputs: [String: Value] = [:]
        var outcomes: [StoreOutcome] = []
        var participants: [AnyStore] = []
        var plan: [DependencyExecution.Step] = []
        participants.reserveCapacity(ordered.count)
        plan.reserveCapacity(ordered.count)
        for store in ordered where store.handles(action.name) {
            participants.append(store)
            plan.append(.init(store: store.name, waitsFor: store.dependencies))
        }
        var execution = DependencyExecution(plan)
        while let ready = execution.nextRunnable() {
            let store = participants[ready.index]
            if let blocker = ready.blockedBy {
                execution.record(store.name, .skipped(blocker.reason))
                outcomes.append(StoreOutcome(store: store.name, status: .skipped(blocker.reason)))
                continue
            }
            let context = DispatchContext(
                sequence: sequence,
                store: store.name,
                dependencies: store.dependencies,
                outputs: outputs,
                cascade: { [unowned self] in try self.enqueueCascade($0) }
            )
            do {
                _ = try store.apply(action, context: context)
                if let output = store.output() { outputs[store.name] = output }
                execution.record(store.name, .ok)
                outcomes.append(StoreOutcome(store: store.name, status: .ok))
                pendingNotifications.append((store.name, action.error))
            } catch {
                let failure = ActionError(describing: error)
                execution.record(store.name, .failed(failure.message))
                outcomes.append(StoreOutcome(store: store.name, status: .failed(failure.message)))
                pendingNotifications.append((store.name, failure))
            }
        }
        return DispatchReport(sequence: sequence, action: action.name, outcomes: outcomes)
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
