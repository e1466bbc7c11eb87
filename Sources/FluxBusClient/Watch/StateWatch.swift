public import Flux

/// A store's state, watched from outside the processes that host it: first the state of a live replica as of some
/// sequence, then the state after each later dispatch that the store ran with outcome ok, in sequence order, with
/// none left out. Made by ``BusClient/watch(_:named:)``.
///
/// Each element's state is what every replica of the store holds at the element's sequence: the watcher keeps a
/// replica of its own, seeded from a live replica, and applies each completed dispatch from the coordinator's history
/// as a worker replaying it does, with the outputs of the store's dependencies as the history recorded them. Where the
/// coordinator published a replica's digest for a sequence, the state here is checked against it.
///
/// Iterating throws ``BusError``:
/// - `diverged` when the store here does not behave as the workers' does (its outcome or digest differs: another
///   version of the store type), instead of showing a state no replica holds;
/// - `refused` when the store has no live replica to read the first state from;
/// - `unreachable` when the coordinator does not answer.
///
/// An iteration reads only as fast as it is iterated: a watcher that falls behind reads what it missed from the
/// history, and where the coordinator's log no longer holds it, the next element is ``StateChange/Kind/resynchronized``.
///
/// One iterator per sequence; each iteration watches on its own.
public struct StateWatch<S: Store>: AsyncSequence, Sendable {
    public typealias Element = StateChange<S.State>

    let client: BusClient
    let name: String
    /// How many publications are kept for a reader that falls behind; only wake-ups, so a small buffer loses nothing.
    let buffer: Int

    public func makeAsyncIterator() -> Iterator {
        Iterator(watcher: StateWatcher<S>(client: client, name: name, buffer: buffer))
    }

    /// Reads the next change; see ``StateWatch``.
    public struct Iterator: AsyncIteratorProtocol {
        let watcher: StateWatcher<S>

        public mutating func next() async throws -> StateChange<S.State>? {
            try await watcher.next()
        }
    }
}

extension BusClient {
    /// Watches a store: its state once, then its state after each change, by sequence.
    ///
    /// ```swift
    /// for try await change in client.watch(CounterStore.self, named: "hits") {
    ///     print(change.sequence, change.state.value, change.isResynchronized ? "(resynchronized)" : "")
    /// }
    /// ```
    /// - Parameters:
    ///   - type: the store type the workers host; the watcher runs its handlers to follow the changes.
    ///   - name: the store's name on the bus, when it is hosted under another name than `type.name`.
    /// - Returns: a ``StateWatch``, which does nothing until it is iterated.
    public func watch<S: Store>(_ type: S.Type, named name: String? = nil) -> StateWatch<S> {
        watch(type, named: name, buffer: 100_000)
    }

    /// ``watch(_:named:)`` keeping at most `buffer` publications unread: tests use a small one to show that a watcher
    /// whose buffer overflows loses nothing.
    package func watch<S: Store>(_ type: S.Type, named name: String?, buffer: Int) -> StateWatch<S> {
        StateWatch(client: self, name: name ?? S.name, buffer: buffer)
    }
}
