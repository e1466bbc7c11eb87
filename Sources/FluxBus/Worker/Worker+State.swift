import Flux
import FluxBusClient
import Synchronization
import ZeroMQ

extension Worker {
    /// The state of a store this worker hosts, read in this process: a copy of its local replica, and the last
    /// sequence that state includes.
    ///
    /// The copy is taken on the worker's I/O thread between two steps of its work, so it never shows a handler's
    /// change half made; taking it is O(1) (store states are copy-on-write values). It waits while a handler runs.
    /// It is the state every replica of the store holds at that sequence. To follow changes, read
    /// ``events`` (`.applied` names each sequence a store ran) and ask again, or watch the store through a
    /// `BusClient` (`BusClient.watch(_:named:)`) from any process.
    ///
    /// ```swift
    /// let (sequence, state) = try await worker.state(of: CounterStore.self, named: "hits")
    /// ```
    /// - Parameters:
    ///   - type: the store type, whose `State` the copy is.
    ///   - name: the store's name on the bus, when it is hosted under another name than `type.name`.
    /// - Throws: `BusError` `usage` when the worker is not running, hosts no store of that name, or hosts it with
    ///   another type.
    public func state<S: Store>(of type: S.Type, named name: String? = nil) async throws -> (sequence: UInt64, state: S.State) {
        let name = name ?? S.name
        guard let shell = running.withLock({ $0?.shell }) else {
            throw BusError(code: .usage, message:
                "worker `\(configuration.id)` is not running: its stores' states are read between run() starting and ending")
        }
        let copy: (sequence: UInt64, state: StoreStateCopy)?
        do {
            copy = try await shell.loop.run { _ in
                let engine = shell.value.engine
                guard let store = engine.storesByName[name] else { return nil }
                return (engine.appliedSequence(of: name), store.takeStateCopy())
            }
        } catch let error as ZMQError where error.isTerminated {
            throw BusError(code: .usage, message: "worker `\(configuration.id)` stopped before its state of `\(name)` was read")
        }
        guard let copy else {
            let hosted = configuration.stores.map(\.effectiveName).joined(separator: ", ")
            throw BusError(code: .usage, message: "worker `\(configuration.id)` hosts no store named `\(name)`; it hosts \(hosted)")
        }
        guard let state = copy.state.value as? S.State else {
            throw BusError(code: .usage, message:
                "store `\(name)` on worker `\(configuration.id)` has state \(Swift.type(of: copy.state.value)), not \(S.State.self)")
        }
        return (copy.sequence, state)
    }
}
