/// One store instance behind a uniform face, so that the in-process ``Hub`` and the bus's worker drive any
/// ``Store`` the same way: by name, through JSON at the edges, without knowing its concrete type.
package final class AnyStore {
    package let name: String
    package let dependencies: [String]
    package let actionNames: [String]
    package let handlesAllActions: Bool
    /// The typed instance, for ``Hub/store(of:)``.
    package let instance: AnyObject

    private let applyAction: (AnyAction, DispatchContext) throws -> Bool
    private typealias AwaitAction = nonisolated(nonsending) (AnyAction, DispatchContext) async throws -> Bool
    private let awaitAction: AwaitAction
    private let asyncHandler: (String) -> Bool
    /// Whether any of its handlers is async; false for most stores, which then never pay for asking per action.
    package let hasAsyncHandlers: Bool
    private let currentOutput: () -> Value?
    private let encodeState: () throws -> [UInt8]
    private let keptDigest: () -> UInt64?
    private let restoreState: ([UInt8]) throws -> Void
    /// Told how long each handler that ran took, when a worker serves metrics; nil otherwise, and then no clock is read.
    package var onHandled: ((Duration) -> Void)?

    /// Wraps a store instance, optionally under another name, with other dependencies, or limited to some of the
    /// action types it has handlers for (a worker's `--store NAME=KIND,after=…,handles=…` does this).
    package init<S: Store>(
        _ store: S, name: String? = nil, dependencies: [String]? = nil, limitedTo actionNames: [String]? = nil
    ) {
        self.name = name ?? S.name
        self.dependencies = dependencies ?? S.dependencies
        self.actionNames = actionNames ?? S.handlers.actionNames
        self.handlesAllActions = actionNames == nil && S.handlers.handlesAllActions
        instance = store
        let handlers = S.handlers.bound(to: store, limitedTo: actionNames.map(Set.init))
        applyAction = { action, context in try handlers.handle(action, context: context) }
        awaitAction = { action, context in try await handlers.handle(action, context: context) }
        hasAsyncHandlers = handlers.hasAsyncHandlers
        asyncHandler = { handlers.isAsync($0) }
        currentOutput = Self.outputReader(of: store)
        encodeState = { try JSONCoding.encode(store.state) }
        keptDigest = Self.digestReader(of: store)
        restoreState = { bytes in
            do {
                store.state = try JSONCoding.decode(S.State.self, from: bytes)
            } catch {
                throw StoreError(code: .stateDecoding, message: "cannot restore store `\(S.name)`: \(error)")
            }
        }
    }

    /// Creates a store of the given type and wraps it; see ``init(_:name:dependencies:limitedTo:)``.
    package convenience init(
        _ type: any Store.Type, name: String? = nil, dependencies: [String]? = nil, limitedTo actionNames: [String]? = nil
    ) {
        self.init(type.init(), name: name, dependencies: dependencies, limitedTo: actionNames)
    }

    /// The action types the store's handler map covers, whatever it is limited to.
    package static func handledActions(of type: any Store.Type) -> (names: [String], all: Bool) {
        func open<S: Store>(_: S.Type) -> (names: [String], all: Bool) {
            (S.handlers.actionNames, S.handlers.handlesAllActions)
        }
        return open(type)
    }

    /// Whether an action of this name reaches the store.
    package func handles(_ actionName: String) -> Bool {
        handlesAllActions || actionNames.contains(actionName)
    }

    /// Runs the store's handler for `action`.
    /// - Returns: whether a handler ran.
    package func apply(_ action: AnyAction, context: DispatchContext) throws -> Bool {
        guard let onHandled else { return try applyAction(action, context) }
        let start = ContinuousClock.now
        do {
            let ran = try applyAction(action, context)
            if ran { onHandled(.now - start) }
            return ran
        } catch {
            onHandled(.now - start)
            throw error
        }
    }

    /// Whether the handler for actions of this name is async: it must be awaited (``applyAwaiting(_:context:)``).
    package func isAsync(_ actionName: String) -> Bool { hasAsyncHandlers && asyncHandler(actionName) }

    /// Runs the store's handler for `action`, awaiting it if it is async.
    /// - Returns: whether a handler ran.
    package nonisolated(nonsending) func applyAwaiting(_ action: AnyAction, context: DispatchContext) async throws -> Bool {
        guard let onHandled else { return try await awaitAction(action, context) }
        let start = ContinuousClock.now
        do {
            let ran = try await awaitAction(action, context)
            if ran { onHandled(.now - start) }
            return ran
        } catch {
            onHandled(.now - start)
            throw error
        }
    }

    /// The store's current output, still typed.
    package func output() -> Value? { currentOutput() }

    /// The store's current output as JSON, for the wire.
    package func encodedOutput() throws -> [UInt8]? { try currentOutput()?.encoded() }

    /// The store's state as canonical JSON (sorted keys): equal states give equal bytes.
    package func encodedState() throws -> [UInt8] { try encodeState() }

    /// The digest the state keeps up to date itself (see ``DigestedState``), or nil when it has to be computed from
    /// the whole state.
    package func maintainedDigest() -> UInt64? { keptDigest() }

    /// Replaces the store's state with one decoded from JSON, as from a snapshot.
    package func restore(fromJSON bytes: [UInt8]) throws { try restoreState(bytes) }

    // MARK: - State copies (for encoding off the I/O thread)

    /// The store's current state as a value that may be encoded on another thread (``StoreStateCopy/encoded()``).
    package func takeStateCopy() -> StoreStateCopy { (instance as! any Store).stateCopy() }

    /// Puts back a state taken with ``takeStateCopy()``; a copy of another store's type is ignored.
    package func restore(_ copy: StoreStateCopy) { (instance as! any Store).restoreState(copy) }
}
