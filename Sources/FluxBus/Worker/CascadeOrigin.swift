import Flux

/// Where the actions a running handler dispatches go (``DispatchContext/dispatch(_:)``): one per engine, made once,
/// and told which handler runs before each one does.
///
/// The context holds a closure that captures only this object: a closure capturing a single strong reference needs no
/// allocation, while one capturing the engine `unowned`, with the handler's sequence, store and count, allocated two
/// objects per store per action, cascading or not.
final class CascadeOrigin {
    /// Unowned: a store that kept its context would otherwise keep the engine alive.
    private unowned let engine: WorkerEngine
    private var sequence: UInt64 = 0
    private var store = ""
    private var count = 0

    init(engine: WorkerEngine) {
        self.engine = engine
    }

    /// The handler of `store` is about to run the action at `sequence`.
    func begin(sequence: UInt64, store: String) {
        self.sequence = sequence
        self.store = store
        count = 0
    }

    /// A cascade's request id names what caused it, not this process: every replica of the store, and a replica
    /// replaying this sequence later, sends the same id, so the coordinator dispatches it once. Spelled only when a
    /// handler cascades: most never do, and the string would cost every action.
    func cascade(_ action: AnyAction) throws {
        count += 1
        try engine.cascade(action, requestID: "cascade-\(sequence)-\(store)-" + String(count))
    }
}
