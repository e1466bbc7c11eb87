/// One benchmark scenario's figures, with the floor it is measured against in the same run.
public struct BenchmarkResult: Sendable, Codable, Hashable {
    /// The scenario's name, as `fluxbus bench NAME` takes it.
    public let scenario: String
    /// What one operation is.
    public let operation: String
    /// Nanoseconds per operation (the median of the rounds).
    public let nanosPerOperation: Double
    /// Nanoseconds per operation of the floor: the same work with nothing in between.
    public let floorNanosPerOperation: Double
    /// What the floor is.
    public let floor: String
    /// The ratio that the scenario must stay under, if it has a target.
    public let targetRatio: Double?
    /// Operations per round, and rounds.
    public let operationsPerRound: Int
    public let rounds: Int

    /// The cost of one operation as a multiple of the floor.
    public var ratio: Double { nanosPerOperation / floorNanosPerOperation }
    /// Operations per second at the measured rate.
    public var operationsPerSecond: Double { 1e9 / nanosPerOperation }
    /// Whether the target, if any, is met.
    public var meetsTarget: Bool? { targetRatio.map { ratio <= $0 } }

    enum CodingKeys: String, CodingKey {
        case scenario, operation, nanosPerOperation, floorNanosPerOperation, floor, targetRatio
        case operationsPerRound, rounds, ratio, operationsPerSecond, meetsTarget
    }

    init(
        scenario: String, operation: String, nanosPerOperation: Double, floorNanosPerOperation: Double,
        floor: String, targetRatio: Double?, operationsPerRound: Int, rounds: Int
    ) {
        self.scenario = scenario
        self.operation = operation
        self.nanosPerOperation = nanosPerOperation
        self.floorNanosPerOperation = floorNanosPerOperation
        self.floor = floor
        self.targetRatio = targetRatio
        self.operationsPerRound = operationsPerRound
        self.rounds = rounds
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            scenario: try container.decode(String.self, forKey: .scenario),
            operation: try container.decode(String.self, forKey: .operation),
            nanosPerOperation: try container.decode(Double.self, forKey: .nanosPerOperation),
            floorNanosPerOperation: try container.decode(Double.self, forKey: .floorNanosPerOperation),
            floor: try container.decode(String.self, forKey: .floor),
            targetRatio: try container.decodeIfPresent(Double.self, forKey: .targetRatio),
            operationsPerRound: try container.decode(Int.self, forKey: .operationsPerRound),
            rounds: try container.decode(Int.self, forKey: .rounds)
        )
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(scenario, forKey: .scenario)
        try container.encode(operation, forKey: .operation)
        try container.encode(nanosPerOperation, forKey: .nanosPerOperation)
        try container.encode(floorNanosPerOperation, forKey: .floorNanosPerOperation)
        try container.encode(floor, forKey: .floor)
        try container.encodeIfPresent(targetRatio, forKey: .targetRatio)
        try container.encode(operationsPerRound, forKey: .operationsPerRound)
        try container.encode(rounds, forKey: .rounds)
        try container.encode(ratio, forKey: .ratio)
        try container.encode(operationsPerSecond, forKey: .operationsPerSecond)
        try container.encodeIfPresent(meetsTarget, forKey: .meetsTarget)
    }
}
