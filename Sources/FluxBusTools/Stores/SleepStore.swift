import Flux
import Foundation

/// A probe for operators and tests: a handler that blocks its worker for a given time, as a slow handler or a long
/// batch does. `sleep.for {"ms": N}` sleeps N milliseconds (at most ten minutes) on the worker's I/O thread;
/// `sleep.await {"ms": N}` does the same with an async handler, which suspends (`Task.sleep`) instead of blocking a
/// thread. The state counts the sleeps and their milliseconds, `{"sleeps": N, "ms": M}`, so replicas can be compared.
///
/// With it, an operator can watch what a slow handler does to the bus: the worker stays live (its guard heartbeats),
/// the coordinator's acknowledgement deadline (`--ack-timeout`) judges the dispatch, and SIGTERM still stops the
/// worker within a few seconds.
public final class SleepStore: Store {
    /// The payload of `sleep.for`.
    public struct For: Codable, Sendable, Hashable {
        public var ms: Int
        public init(ms: Int) { self.ms = ms }
    }

    /// The store's state: how many sleeps it ran, and for how long in all.
    public struct State: Codable, Sendable, Hashable {
        public var sleeps = 0
        public var ms = 0
        public init() {}
    }

    /// The longest sleep it accepts, in milliseconds: ten minutes.
    public static let longest = 600_000

    /// `sleep.for {"ms": N}`.
    public static let sleepFor = ActionType<For>("sleep.for")
    /// `sleep.await {"ms": N}`: the same, awaited.
    public static let sleepAwait = ActionType<For>("sleep.await")

    public static let name = "sleep"
    public static let handlers = Handlers<SleepStore>()
        .on(sleepFor) { store, action, _ in
            let ms = action.payload.ms
            guard (0...longest).contains(ms) else {
                throw ActionError("sleep.for takes 0 to \(longest) ms, not \(ms)")
            }
            Thread.sleep(forTimeInterval: Double(ms) / 1_000)
            store.state.sleeps += 1
            store.state.ms += ms
        }
        .on(sleepAwait) { store, action, _ in
            let ms = action.payload.ms
            guard (0...longest).contains(ms) else {
                throw ActionError("sleep.await takes 0 to \(longest) ms, not \(ms)")
            }
            try await Task.sleep(for: .milliseconds(ms))
            store.state.sleeps += 1
            store.state.ms += ms
        }

    public var state = State()
    public init() {}
}
