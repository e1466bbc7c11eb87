import Flux

/// A test probe: a handler that traps, as a handler with an index out of range does, taking its worker process down.
/// `crash.run {"crash": true}` traps (`fatalError`) on every replica, every time it runs, so a worker restarted after
/// it replays the same action and traps again (the poison loop of issue 18, point 5); `crash.run {"crash": false}`
/// counts a run. The state is `{"runs": N}`. Not for production buses: it exists to reproduce that failure.
public final class CrashStore: Store {
    /// The payload of `crash.run`.
    public struct Run: Codable, Sendable, Hashable {
        public var crash: Bool
        public init(crash: Bool) { self.crash = crash }
    }

    /// The store's state: how many runs did not trap.
    public struct State: Codable, Sendable, Hashable {
        public var runs = 0
        public init() {}
    }

    /// `crash.run {"crash": Bool}`.
    public static let run = ActionType<Run>("crash.run")

    public static let name = "crash"
    public static let handlers = Handlers<CrashStore>()
        .on(run) { store, action, _ in
            if action.payload.crash { fatalError("crash probe: crash.run {\"crash\":true} traps, as it was asked to") }
            store.state.runs += 1
        }

    public var state = State()
    public init() {}
}
