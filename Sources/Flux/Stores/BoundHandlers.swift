/// A store's handler map bound to one instance of the store, as ``AnyStore`` runs it: each handler already holds its
/// store, so running one needs no generic type.
package struct BoundHandlers {
    package typealias Awaiting = nonisolated(nonsending) (AnyAction, DispatchContext) async throws -> Void

    package enum Handler {
        case sync((AnyAction, DispatchContext) throws -> Void)
        case async(Awaiting)

        var isAsync: Bool { if case .async = self { true } else { false } }
    }

    /// The store's name, for the error a synchronous run of an async handler throws.
    let store: String
    let table: [String: Handler]
    let fallback: Handler?
    /// Whether any handler it runs is async: one limited away from its async handlers has none.
    let hasAsyncHandlers: Bool

    init(store: String, table: [String: Handler], fallback: Handler?) {
        self.store = store
        self.table = table
        self.fallback = fallback
        hasAsyncHandlers = table.values.contains(where: \.isAsync) || fallback?.isAsync == true
    }

    /// Whether the handler for actions of this name is async.
    func isAsync(_ actionName: String) -> Bool {
        (table[actionName] ?? fallback)?.isAsync ?? false
    }

    /// Runs the handler for `action`, if there is one.
    /// - Returns: whether a handler ran.
    /// - Throws: whatever the handler throws; ``StoreError`` when the payload does not fit, or (`asyncHandler`) when
    ///   the handler is async and so cannot run here.
    func handle(_ action: AnyAction, context: DispatchContext) throws -> Bool {
        switch table[action.name] ?? fallback {
        case nil: return false
        case .sync(let handler): try handler(action, context)
        case .async: throw StoreError.asyncHandler(store: store, action: action.name)
        }
        return true
    }

    /// Runs the handler for `action`, if there is one, awaiting it if it is async.
    nonisolated(nonsending) func handle(_ action: AnyAction, context: DispatchContext) async throws -> Bool {
        switch table[action.name] ?? fallback {
        case nil: return false
        case .sync(let handler): try handler(action, context)
        case .async(let handler): try await handler(action, context)
        }
        return true
    }
}
