import Flux

/// The in-process benchmarks: the Flux dispatcher and the Redux store, each against a floor of the same closures
/// called directly, measured in the same run.
public enum InProcessBenchmarks {
    /// The scenarios, by name.
    public static let scenarios = ["dispatcher", "redux"]

    /// How long to measure.
    public struct Settings: Sendable {
        /// Operations per round.
        public var operations: Int
        /// Rounds; the reported figure is the median round.
        public var rounds: Int

        public init(operations: Int = 1_000_000, rounds: Int = 7) {
            self.operations = operations
            self.rounds = rounds
        }
    }

    /// Runs one scenario.
    /// - Throws: only if the code under test throws, which would be a bug.
    public static func run(_ scenario: String, settings: Settings = .init()) throws -> BenchmarkResult? {
        switch scenario {
        case "dispatcher": try dispatcher(settings)
        case "redux": try redux(settings)
        default: nil
        }
    }

    /// A workload and its floor: each runs `count` operations. The timing benchmark and `flux-instructions` (which
    /// counts instructions under callgrind) run the same ones.
    public struct Workload {
        public let run: (Int) throws -> Void
        public let floor: (Int) throws -> Void
        /// Whether the work happened (the optimiser kept it): check after running.
        public let didWork: () -> Bool
    }

    /// The workloads, by scenario name.
    public static func workload(_ scenario: String) -> Workload? {
        switch scenario {
        case "dispatcher": dispatcherWorkload()
        case "redux": reduxWorkload()
        default: nil
        }
    }

    /// One `dispatch` to 11 callbacks, one of which calls `waitFor` on another, against the same 11 closures called
    /// from an array.
    static func dispatcherWorkload() -> Workload {
        let sink = Sink()
        // One factory makes every closure, so the dispatcher and the floor call the same bodies through the same
        // number of layers.
        func work(_ weight: Int) -> (Int) -> Void { { payload in sink.total &+= payload &* weight } }
        let floorClosures = (1...11).map(work)

        let dispatcher = Dispatcher<Int>()
        // The fourth callback waits for the ninth before doing its own work. Its token list is built once, as an
        // application keeps its stores' tokens, so the figure measures the dispatcher rather than array allocation.
        let waitList = WaitList()
        for weight in 1...11 {
            if weight == 4 {
                let closure = work(weight)
                dispatcher.register { payload in
                    try dispatcher.waitFor(waitList.tokens)
                    closure(payload)
                }
            } else {
                let token = dispatcher.register(work(weight))
                if weight == 9 { waitList.tokens = [token] }
            }
        }
        return Workload(
            run: { count in for payload in 0..<count { try dispatcher.dispatch(payload) } },
            floor: { count in
                for payload in 0..<count {
                    for closure in floorClosures { closure(payload) }
                }
            },
            didWork: { sink.total != 0 })
    }

    /// Target: at most 1.5 times the floor.
    static func dispatcher(_ settings: Settings) throws -> BenchmarkResult {
        let workload = dispatcherWorkload()
        let measured = try measure(settings, workload.run)
        let floor = try measure(settings, workload.floor)
        precondition(workload.didWork())
        return BenchmarkResult(
            scenario: "dispatcher", operation: "one dispatch to 11 callbacks, one waiting for another",
            nanosPerOperation: measured, floorNanosPerOperation: floor,
            floor: "the same 11 closures called from an array", targetRatio: 1.5,
            operationsPerRound: settings.operations, rounds: settings.rounds
        )
    }

    private struct Add: ReduxAction { let amount: Int }

    /// One Redux dispatch through three middlewares, a reducer and ten subscribers, against the same middleware
    /// bodies, reducer and subscribers called directly.
    static func reduxWorkload() -> Workload {
        let sink = Sink()
        let middlewareWork: [(Int) -> Void] = (1...3).map { weight in { sink.total &+= $0 &* weight } }
        let reducer: (Int, Int) -> Int = { state, amount in state &+ amount }
        let subscribers: [(Int, Int) -> Void] = (1...10).map { weight in { old, new in sink.total &+= (new &- old) &* weight } }

        let middleware = middlewareWork.map { body in
            Middleware<Int> { _, action, next in
                body((action as! Add).amount)
                try next(action)
            }
        }
        let store = ReduxStore(state: 0, reducer: { state, action in reducer(state, (action as! Add).amount) },
                               middleware: middleware)
        let subscriptions = subscribers.map { subscriber in store.subscribe(subscriber) }
        let floorState = Sink()
        return Workload(
            run: { count in for amount in 0..<count { try store.dispatch(Add(amount: amount | 1)) } },
            floor: { count in
                for amount in 0..<count {
                    let amount = amount | 1
                    for body in middlewareWork { body(amount) }
                    let old = floorState.total
                    floorState.total = reducer(floorState.total, amount)
                    for subscriber in subscribers { subscriber(old, floorState.total) }
                }
            },
            didWork: { sink.total != 0 && subscriptions.count == 10 })
    }

    static func redux(_ settings: Settings) throws -> BenchmarkResult {
        let workload = reduxWorkload()
        let measured = try measure(settings, workload.run)
        let floor = try measure(settings, workload.floor)
        precondition(workload.didWork())
        return BenchmarkResult(
            scenario: "redux", operation: "one dispatch through 3 middlewares, a reducer and 10 subscribers",
            nanosPerOperation: measured, floorNanosPerOperation: floor,
            floor: "the same middleware bodies, reducer and subscribers called directly", targetRatio: nil,
            operationsPerRound: settings.operations, rounds: settings.rounds
        )
    }

    /// Runs `body` once to warm up, then `rounds` times; returns the median nanoseconds per operation.
    private static func measure(_ settings: Settings, _ body: (Int) throws -> Void) throws -> Double {
        try body(settings.operations / 10 + 1)
        var perOperation: [Double] = []
        let clock = ContinuousClock()
        for _ in 0..<settings.rounds {
            let elapsed = try clock.measure { try body(settings.operations) }
            perOperation.append(elapsed.nanoseconds / Double(settings.operations))
        }
        return perOperation.sorted()[perOperation.count / 2]
    }

    /// The tokens one callback waits for, filled in once the ninth callback is registered.
    private final class WaitList {
        var tokens: [DispatchToken] = []
    }

    /// Somewhere for the closures' work to go, so the optimiser cannot drop it.
    private final class Sink {
        var total = 0
    }
}
