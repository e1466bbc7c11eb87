import FluxBusProtocol

/// What the simulator saw of acknowledgements: a worker joins a burst's ACKs into ACKS runs, which the coordinator
/// keeps whole and walks (``Codec/decodeAll(_:keepingAcks:)``). The swarm must exercise both, so each ACK in a run is
/// held to the model as a single one is, and the runs that reach the coordinator are counted.
struct AckCoverage {
    /// ACKs held to the model (``SimChecker/acknowledged(_:by:)``), and of them those a worker sent in a run.
    var checked = 0
    var checkedInRuns = 0
    /// ACKS runs that reached the coordinator's engine, and the ACKs they held.
    private(set) var runsReceived = 0
    private(set) var acksInRunsReceived = 0

    /// Counts the ACKS runs in `frames`, as the coordinator's ROUTER gives them (the routing id first), taken apart as
    /// the coordinator takes them.
    mutating func received(_ frames: [[UInt8]]) {
        guard frames.count == 3, let command = frames[2].first,
            command == Command.acks.rawValue || command == Command.bundle.rawValue,
            let messages = try? Codec().decodeAll(Array(frames.dropFirst()), keepingAcks: true)
        else { return }
        for case .acks(let run) in messages {
            runsReceived += 1
            acksInRunsReceived += Int(run.count)
        }
    }

    static func + (left: Self, right: Self) -> Self {
        var sum = left
        sum.checked += right.checked
        sum.checkedInRuns += right.checkedInRuns
        sum.runsReceived += right.runsReceived
        sum.acksInRunsReceived += right.acksInRunsReceived
        return sum
    }
}
