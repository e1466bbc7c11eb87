import Foundation
import FluxBus
import FluxBusProtocol

/// `fluxbus bench`: runs scenarios by name, the raw ZeroMQ baseline in the same run, and prints or encodes them.
public enum BenchRunner {
    /// Every scenario, with what it measures, in the order they run.
    public static let catalogue: [(name: String, summary: String)] = [
        ("dispatcher", "in process: one Flux dispatch to 11 callbacks, one waiting for another, vs. the same closures (target <= 1.5x floor)"),
        ("redux", "in process: one Redux dispatch through 3 middlewares, a reducer and 10 subscribers, vs. the same functions"),
        ("baseline", "raw ZeroMQ DEALER -> ROUTER relay -> echo DEALER and back, 3 processes, tcp 127.0.0.1 (runs with every distributed scenario)"),
        ("workers-1", "counter.add to 1 worker process: lock-step latency, then throughput with 32 outstanding (target: median <= 2x baseline)"),
        ("workers-3", "counter.add to a store replicated on 3 worker processes (target >= 5,000 dispatches/s with 32 outstanding)"),
        ("workers-8", "lock-step counter.add to a store replicated on 8 worker processes"),
        ("flight", "lock-step country-update through country <- city <- price on 3 worker processes (target: median <= 3x baseline)"),
        ("flight-floor", "raw ZeroMQ in flight's shape: 5 processes, 8 messages on the path, the 3 syncs of --sync always (flight's floor)"),
        ("flight-floor-unsynced", "flight-floor without its syncs"),
        ("status-rtt", "lock-step STATUS requests: client -> coordinator -> client, no worker on the path (target: median <= 0.6x baseline)"),
        ("status-floor", "raw ZeroMQ client -> relay -> client: the two hops of status-rtt (its floor)"),
        ("catch-up", "a fresh replica replays a 100,000-action log (target >= 500,000 actions/s)"),
        ("durable-always", "workers-1 with the coordinator on a SQLite log, --sync always"),
        ("durable-off", "workers-1 with the coordinator on a SQLite log, --sync off (target: median <= 1.5x baseline)"),
        ("batch", "counter.add in DISPATCH_BATCH requests of 1,000 to 1 worker process (target >= 200,000 actions/s)"),
        ("large-state", "lock-step kv.set to a kv store of 1,000,000 entries vs. the empty store (target: p50 ratio <= 1.2); only when named"),
        ("snapshot-join", "a fresh replica joins a 1,000,000-entry kv store from a snapshot (targets: <= 30 s, memory); only when named"),
        ("memory", "1,000,000 dispatches, coordinator VmRSS every 10% (target: growth from 10% to the end < 10%); only when named"),
    ]

    /// What runs when no scenario is named: everything but those that take minutes.
    public static let defaultSet = catalogue.map(\.name).filter { !["memory", "large-state", "snapshot-join"].contains($0) }

    /// Whether `name` is a scenario: one of the catalogue, or `workers-N` for any N from 1 to 64.
    public static func isScenario(_ name: String) -> Bool {
        catalogue.contains { $0.name == name } || workerCount(name) != nil
    }

    static func workerCount(_ name: String) -> Int? {
        guard name.hasPrefix("workers-"), let count = Int(name.dropFirst("workers-".count)), (1...64).contains(count) else { return nil }
        return count
    }

    /// Runs the scenarios (in the catalogue's order; the baseline first whenever a distributed one runs).
    /// Failures are reported in the scenario's entry rather than thrown, so one broken scenario does not hide the rest.
    public static func run(_ names: [String], settings: BenchSettings, command: String) async -> BenchReport {
        let order = catalogue.map(\.name)
        let names = names.sorted { (order.firstIndex(of: $0) ?? 3) < (order.firstIndex(of: $1) ?? 3) }
        let distributed = names.contains { !["dispatcher", "redux"].contains($0) }
        var report = BenchReport(
            machine: .current(), command: command, cluster: settings.control ?? "local", payloadBytes: settings.payloadBytes,
            baseline: nil, scenarios: [])
        if distributed { report.baseline = await guarded("baseline") { try await baseline(settings) } }
        for name in names where name != "baseline" {
            report.scenarios.append(await guarded(name) { try await run(name, settings: settings) })
        }
        // The floor again after the scenarios: on a shared machine it moves, and the ratios use the faster of the
        // two, so that a slow moment of the baseline cannot make a target look met.
        if report.scenarios.contains(where: { $0.latency != nil }), report.baseline?.outcome == .ok {
            var after = await guarded("baseline") { try await baseline(settings) }
            after.scenario = "baseline-end"
            report.baselineEnd = after
        }
        let medians = [report.baseline, report.baselineEnd].compactMap { $0?.latency?.p50 }.filter { $0 > 0 }
        report.baselineMedian = medians.min()
        if let floor = report.baselineMedian {
            if let median = report.baseline?.latency?.p50 { report.baseline?.ratioToBaseline = median / floor }
            if let median = report.baselineEnd?.latency?.p50 { report.baselineEnd?.ratioToBaseline = median / floor }
        }
        for index in report.scenarios.indices {
            if let median = report.scenarios[index].latency?.p50, let floor = report.baselineMedian {
                report.scenarios[index].ratioToBaseline = median / floor
            }
            report.scenarios[index].targets += targets(for: report.scenarios[index])
        }
        shapeRatios(&report.scenarios)
        return report
    }

    /// Runs a scenario, reporting a failure in its entry, with its wall time and the CPU time stolen meanwhile.
    private static func guarded(_ name: String, _ body: () async throws -> ScenarioReport) async -> ScenarioReport {
        let (started, stolen) = (ContinuousClock.now, MachineInfo.stolenCPUSeconds())
        var report = await reporting(name, body)
        report.wallSeconds = (ContinuousClock.now - started).nanoseconds / 1e9
        if let stolen, let now = MachineInfo.stolenCPUSeconds() { report.stolenCPUSeconds = now - stolen }
        return report
    }

    private static func reporting(_ name: String, _ body: () async throws -> ScenarioReport) async -> ScenarioReport {
        do {
            return try await body()
        } catch {
            let message = (error as? BusError)?.message ?? "\(error)"
            return ScenarioReport(scenario: name, operation: "", outcome: .failed, message: message)
        }
    }

    static func run(_ name: String, settings: BenchSettings) async throws -> ScenarioReport {
        let latencyCount = settings.count(default: 10_000, quick: 200)
        switch name {
        case "dispatcher", "redux":
            let inProcess = InProcessBenchmarks.Settings(
                operations: settings.count ?? (settings.quick ? 10_000 : 1_000_000), rounds: settings.rounds ?? (settings.quick ? 3 : 7))
            guard let result = try InProcessBenchmarks.run(name, settings: inProcess) else { fatalError("unknown in-process scenario") }
            var report = ScenarioReport(scenario: name, operation: result.operation)
            report.count = result.operationsPerRound
            report.throughput = result.operationsPerSecond
            report.inProcess = result
            if let ratio = result.targetRatio {
                report.targets.append(.init(metric: "per op / floor", comparison: "<=", threshold: ratio, value: result.ratio))
            }
            return report
        case "flight":
            return try await ClusterBenchmarks.lockStep(ClusterBenchmarks.flightShape(settings: settings), settings: settings, count: latencyCount)
        case "status-rtt":
            return try await ClusterBenchmarks.statusRoundTrip(settings: settings, count: latencyCount)
        case "flight-floor", "flight-floor-unsynced", "status-floor":
            return try await shapeFloor(name, settings: settings)
        case "catch-up":
            return try await CatchUpBench.run(settings: settings, count: settings.count(default: 100_000, quick: 2_000))
        case "durable-always", "durable-off":
            return try await ClusterBenchmarks.durable(String(name.dropFirst("durable-".count)), settings: settings, count: latencyCount)
        case "batch":
            return try await ClusterBenchmarks.batch(
                settings: settings, count: settings.count(default: 200_000, quick: 2_000), batchSize: settings.quick ? 100 : 1_000)
        case "large-state":
            return try await StateSizeBenchmarks.largeState(
                settings: settings, count: latencyCount, entries: settings.stateEntries ?? (settings.quick ? 2_000 : 1_000_000))
        case "snapshot-join":
            return try await SnapshotJoinBench.run(settings: settings, entries: settings.stateEntries ?? (settings.quick ? 30_000 : 1_000_000))
        case "memory":
            return try await ClusterBenchmarks.memory(settings: settings, count: settings.count(default: 1_000_000, quick: 2_000))
        default:
            guard let workers = workerCount(name) else { throw BusError(code: .usage, message: "unknown scenario '\(name)'") }
            let shape = ClusterBenchmarks.counterShape(name, workers: workers, settings: settings)
            return try await ClusterBenchmarks.lockStep(shape, settings: settings, count: latencyCount)
        }
    }

    /// The targets that compare a scenario with the baseline or an absolute rate: issue 17's (docs/BENCHMARKS.md).
    static func targets(for scenario: ScenarioReport) -> [ScenarioReport.Target] {
        guard scenario.outcome == .ok else { return [] }
        let ratioAtMost: Double? = switch scenario.scenario {
        case "workers-1": 2
        case "durable-off": 1.5
        case "flight": 3
        case "status-rtt": 0.6
        default: nil
        }
        if let ratioAtMost {
            return scenario.ratioToBaseline.map { [.init(metric: "median / baseline median", comparison: "<=", threshold: ratioAtMost, value: $0)] } ?? []
        }
        guard scenario.scenario == "workers-3" else { return [] }
        return scenario.pipelinedThroughput.map {
            [.init(metric: "dispatches per second, \(scenario.pipelineWindow ?? 0) outstanding", comparison: ">=", threshold: 5_000, value: $0)]
        } ?? []
    }
}
