import FluxBus
import FluxBusProtocol
import FluxStores
import Foundation
import Testing

/// PUB/SUB loses a whole BUNDLE, and a batch's ACTIONs travel in one: a worker that loses it knows nothing of a
/// hundred dispatches at once. The Python worker of `Tests/ForeignWorker` loses its first such BUNDLE on purpose
/// (`--lose-bundle 1`), beside a Swift replica of the same counter, and repair must take a bounded number of round
/// trips, not one per action (before: one 200 ms re-send per action, about 20 s for this batch).
@Suite("A worker that loses a batch's BUNDLE", .serialized, .timeLimit(.minutes(1)))
struct BatchRepairTests {
    static let batchSize = 100

    @Test("is sent the lost ACTIONs in a few messages, and the batch completes on both replicas")
    func aLostBatchBundleIsRepairedInAFewMessages() async throws {
        _ = try await Cluster.requirePython()
        let cluster = try Cluster()
        try cluster.startCoordinator(ForeignWorkerTests.coordinatorOptions)
        try await cluster.startPythonWorker("py1", store: "counter", options: ["--lose-bundle", "1"])
        _ = try cluster.startWorker("sw1", stores: ["counter=counter"])
        let client = try await cluster.client()
        try await cluster.waitUntilLive(2, client: client)

        let actions = (0..<Self.batchSize).map { _ in
            BatchAction(actionType: "counter.add", payload: Array(#"{"by":1}"#.utf8), error: nil)
        }
        let result = try await client.dispatchBatch(actions, timeout: .seconds(30))
        #expect(result.count == UInt32(Self.batchSize))
        #expect(result.failures.isEmpty, "no action failed or went unknown on any replica: \(result.failures.prefix(5))\n\(cluster.allLogs())")
        let digests = Set(result.outcomes.map(\.digest))
        #expect(result.outcomes.count == 2 && digests.count == 1, "both replicas end equal: \(result.outcomes)")
        #expect(digests.first == StateDigest.fnv1a64(Array(#"{"value":100}"#.utf8)))

        await client.close()
        let exits = await cluster.stop()
        #expect(exits == ["coordinator": 0, "py1": 0, "sw1": 0], "\(cluster.allLogs())")
        let log = cluster.log("py1")
        #expect(log.contains("lost on purpose: a BUNDLE of \(Self.batchSize) ACTIONs"), "the loss happened\n\(log)")
        let repair = try #require(Self.resendFigures(in: log), "the worker reports its repair\n\(log)")
        #expect(repair.actions >= Self.batchSize, "every lost ACTION came again: \(repair)")
        #expect(repair.messages <= 3, "in a few messages, not one per action: \(repair)\n\(log)")
    }

    /// The figures of the worker's last line: `re-sent A ACTIONs directly, in M messages`.
    static func resendFigures(in log: String) -> (actions: Int, messages: Int)? {
        guard let line = log.split(separator: "\n").last(where: { $0.contains("ACTIONs directly") }) else { return nil }
        let numbers = line.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
        guard numbers.count >= 2 else { return nil }
        return (numbers[numbers.count - 2], numbers[numbers.count - 1])
    }
}
