/// One action's run through a hub's stores: which store goes next, with what context, and what each did. The hub's
/// synchronous and awaiting dispatches drive the same run, so they cannot differ in order or outcomes.
struct HubRun {
    let action: AnyAction
    let sequence: UInt64
    private let participants: [AnyStore]
    private var execution: DependencyExecution
    private var outputs: [String: Value] = [:]
    private var outcomes: [StoreOutcome] = []
    /// Stores whose state changed or whose handler threw, for the observers once the dispatch is over.
    private(set) var notifications: [(store: String, error: ActionError?)] = []

    init(_ action: AnyAction, sequence: UInt64, stores ordered: [AnyStore]) {
        self.action = action
        self.sequence = sequence
        var participants: [AnyStore] = []
        var plan: [DependencyExecution.Step] = []
        participants.reserveCapacity(ordered.count)
        plan.reserveCapacity(ordered.count)
        for store in ordered where store.handles(action.name) {
            participants.append(store)
            plan.append(.init(store: store.name, waitsFor: store.dependencies))
        }
        self.participants = participants
        execution = DependencyExecution(plan)
    }

    /// The next store to run, with its context; a store a dependency blocks is recorded skipped on the way.
    mutating func next(cascade: @escaping (AnyAction) throws -> Void) -> (store: AnyStore, context: DispatchContext)? {
        while let ready = execution.nextRunnable() {
            let store = participants[ready.index]
            if let blocker = ready.blockedBy {
                execution.record(store.name, .skipped(blocker.reason))
                outcomes.append(StoreOutcome(store: store.name, status: .skipped(blocker.reason)))
                continue
            }
            let context = DispatchContext(
                sequence: sequence, store: store.name, dependencies: store.dependencies, outputs: outputs, cascade: cascade)
            return (store, context)
        }
        return nil
    }

    /// Records how the store's handler ended: returned (nil) or threw.
    mutating func finished(_ store: AnyStore, throwing error: (any Error)?) {
        if let error {
            let failure = ActionError(describing: error)
            execution.record(store.name, .failed(failure.message))
            outcomes.append(StoreOutcome(store: store.name, status: .failed(failure.message)))
            notifications.append((store.name, failure))
        } else {
            if let output = store.output() { outputs[store.name] = output }
            execution.record(store.name, .ok)
            outcomes.append(StoreOutcome(store: store.name, status: .ok))
            notifications.append((store.name, action.error))
        }
    }

    var report: DispatchReport { DispatchReport(sequence: sequence, action: action.name, outcomes: outcomes) }
}
