import Dispatch
import Flux

/// Runs a store's async handler to its end on the calling thread, the worker's I/O thread, which waits for it: a
/// worker still runs one handler at a time, in order, and the next store and the next dispatch wait, as for any
/// handler. While it waits, the ``LivenessGuard`` heartbeats for the worker, and the coordinator's acknowledgement
/// deadline judges the dispatch (docs/GUIDE.md, "Async handlers").
///
/// The handler runs in a task of its own. The store and the context cross to it unchecked: the only thread that
/// touches them otherwise is the one blocked here until the task ends, and the semaphore orders the two.
enum AwaitedHandler {
    static func run(_ store: AnyStore, _ action: AnyAction, _ context: DispatchContext) throws -> Bool {
        let call = Handed((store, action, context))
        let outcome = Handed<Result<Bool, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            let (store, action, context) = call.value
            do {
                outcome.value = .success(try await store.applyAwaiting(action, context: context))
            } catch {
                outcome.value = .failure(error)
            }
            done.signal()
        }
        done.wait()
        return try outcome.value!.get()
    }

    /// A value handed between the waiting thread and the task, one at a time (see above).
    private final class Handed<Value>: @unchecked Sendable {
        var value: Value
        init(_ value: Value) { self.value = value }
    }
}
