/// What one scenario measured, in the form that `fluxbus bench` prints and `--json` encodes.
public struct ScenarioReport: Sendable, Codable, Hashable {
    /// `ok`, `unavailable` (the scenario cannot run where it was asked to, e.g. `durable-*` against `--control`) or
    /// `failed`.
    public enum Outcome: String, Sendable, Codable, Hashable { case ok, unavailable, failed }

    /// A target and whether it was met.
    public struct Target: Sendable, Codable, Hashable {
        /// What is compared, e.g. "median / baseline median".
        public let metric: String
        /// `<=` or `>=` or `<`.
        public let comparison: String
        public let threshold: Double
        public let value: Double
        public var met: Bool {
            switch comparison {
            case "<=": value <= threshold
            case "<": value < threshold
            default: value >= threshold
            }
        }

        enum CodingKeys: String, CodingKey { case metric, comparison, threshold, value, met }

        public init(metric: String, comparison: String, threshold: Double, value: Double) {
            (self.metric, self.comparison, self.threshold, self.value) = (metric, comparison, threshold, value)
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.init(metric: try container.decode(String.self, forKey: .metric),
                      comparison: try container.decode(String.self, forKey: .comparison),
                      threshold: try container.decode(Double.self, forKey: .threshold),
                      value: try container.decode(Double.self, forKey: .value))
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(metric, forKey: .metric)
            try container.encode(comparison, forKey: .comparison)
            try container.encode(threshold, forKey: .threshold)
            try container.encode(value, forKey: .value)
            try container.encode(met, forKey: .met)
        }
    }

    /// A scenario's median over one of its floors' (``ShapeFloors``).
    public struct FloorRatio: Sendable, Codable, Hashable {
        public let floor: String
        public let ratio: Double
    }

    public var scenario: String
    /// What one operation is.
    public var operation: String
    public var outcome: Outcome
    /// Why the scenario is unavailable or failed, or notes on how it ran.
    public var message: String?
    /// Worker processes (or replicas) the scenario ran with.
    public var workers: Int?
    /// Measured operations (after warm-up).
    public var count: Int?
    public var latency: LatencySummary?
    /// Operations per second over the measured part (lock-step for dispatch scenarios: one at a time).
    public var throughput: Double?
    /// Operations per second with `pipelineWindow` dispatches outstanding (the coordinator's queue kept full).
    public var pipelinedThroughput: Double?
    public var pipelineWindow: Int?
    /// The median latency divided by the baseline's median in the same run (``BenchReport/baselineMedian``).
    public var ratioToBaseline: Double?
    /// The median latency divided by the median of each floor in this scenario's own shape that ran beside it
    /// (`flight-floor` for `flight`, `status-floor` for `status-rtt`).
    public var ratiosToShapeFloors: [FloorRatio]?
    /// The coordinator's CPU seconds (user + system) over the measured part.
    public var coordinatorCPUSeconds: Double?
    /// The scenario's wall time, and the CPU time the hypervisor took from this machine meanwhile (summed over its
    /// CPUs): on a shared VM, a scenario that ran while neighbours took the CPUs is not comparable with one that did not.
    public var wallSeconds: Double?
    public var stolenCPUSeconds: Double?
    /// The coordinator's peak resident set (VmHWM) at the end, in bytes.
    public var coordinatorPeakRSSBytes: Int?
    /// For `memory`: the coordinator's VmRSS at every 10% of the run, in bytes.
    public var rssSamples: [Int]?
    /// For `memory`: growth of VmRSS from the 10% mark to the end, in percent.
    public var rssGrowthPercent: Double?
    /// For the in-process scenarios: their own figure against their floor.
    public var inProcess: BenchmarkResult?
    public var targets: [Target] = []

    public init(scenario: String, operation: String, outcome: Outcome = .ok, message: String? = nil) {
        self.scenario = scenario
        self.operation = operation
        self.outcome = outcome
        self.message = message
    }
}

/// The whole run: the machine, the settings and every scenario.
public struct BenchReport: Sendable, Codable, Hashable {
    public var machine: MachineInfo
    public var command: String
    /// Where the cluster scenarios ran: `local` (spawned by the benchmark) or the control endpoint given.
    public var cluster: String
    public var payloadBytes: Int
    /// The raw ZeroMQ baseline, before the scenarios.
    public var baseline: ScenarioReport?
    /// The same baseline again after the scenarios.
    public var baselineEnd: ScenarioReport?
    /// The lower of the two baselines' medians, in microseconds: what every `ratioToBaseline` divides by.
    public var baselineMedian: Double?
    public var scenarios: [ScenarioReport]
}
