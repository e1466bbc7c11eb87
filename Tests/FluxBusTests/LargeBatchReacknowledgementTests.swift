import Flux
import Foundation
import FluxBusProtocol
import FluxStores
import Testing

@testable import FluxBus

/// A batch larger than `--max-in-flight` starts alone, so all of it is in flight (up to `--max-batch`, at most
/// ``BusDefaults/largestBatch``). A coordinator restarted in the middle publishes every action not completed again,
/// and each worker that applied one must acknowledge it again from memory. A worker remembered 4,096: a restart during a
/// batch of 10,000 wrote off a worker that had applied the whole batch, for the acknowledgements it had forgotten; and a
/// worker restarted from its checkpoint had kept only the newest 64.
@Suite("A batch as large as --max-batch allows, acknowledged again after a restart", .timeLimit(.minutes(1)))
struct LargeBatchReacknowledgementTests {
    static func add(_ sequence: UInt64, epoch: UInt64) -> Message {
        .action(.init(
            epoch: epoch, sequence: sequence, actionType: "counter.add", payload: Array(#"{"by":1}"#.utf8),
            plan: [PlanStep(store: "counter")]))
    }

    @Test func everyActionOfTheLargestBatchIsAcknowledgedAgain() async throws {
        let size = UInt64(BusDefaults.largestBatch)
        let coordinator = try RawCoordinator()
        let (worker, task) = coordinator.startWorker("w1", [HostedStore(CounterStore.self)])
        let id = Array("w1".utf8)
        let (first, again) = try await onDedicatedThread { () -> ([UInt64: StoreResult], [UInt64: StoreResult]) in
            // A worker starting on a machine busy with other tests (`swift test` runs them side by side) may take
            // longer than 5 s to say HELLO; the suite's time limit still bounds the wait.
            guard case .hello? = try coordinator.receive(timeout: .seconds(30))?.message else {
                throw PollTimeout(description: "no HELLO")
            }
            try coordinator.send(coordinator.welcome(epoch: 1, sequence: 0), to: id)
            _ = try RestartedCoordinatorTests.await(coordinator, heartbeating: 1, at: 0) { if case .ready = $0 { true } else { nil } }
            let first = try Self.send(through: size, epoch: 1, to: coordinator)
            // The restart: nothing of the batch completed, so every action is published again under epoch 2.
            _ = try RestartedCoordinatorTests.await(coordinator, heartbeating: 2, at: 0) { if case .hello = $0 { true } else { nil } }
            try coordinator.send(coordinator.welcome(epoch: 2, sequence: 0), to: id)
            _ = try RestartedCoordinatorTests.await(coordinator, heartbeating: 2, at: 0) { if case .ready = $0 { true } else { nil } }
            return (first, try Self.send(through: size, epoch: 2, to: coordinator))
        }
        let events = try await SnapshotTests.finish(worker, task)
        coordinator.close()

        #expect(first.count == Int(size))
        #expect(again.count == Int(size), "acknowledged again: \(again.count) of \(size); missing \((1...size).filter { again[$0] == nil }.prefix(5))…\((1...size).filter { again[$0] == nil }.suffix(3))")
        #expect((1...size).allSatisfy { again[$0] == first[$0] }, "the same results, from memory")
        #expect(SnapshotTests.applied(events, "counter").count == Int(size), "nothing applied twice")
    }

    /// A worker restarted from its checkpoint answers from the checkpoint, which keeps the acknowledgement of every
    /// sequence the coordinator has not said completed, not only the newest 64: when one machine runs both and loses
    /// power during a batch, the restarted coordinator publishes the whole batch again.
    @Test func aCheckpointKeepsEveryAcknowledgementNotYetCompleted() async throws {
        let count: UInt64 = 300
        let directory = try CheckpointTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let coordinator = try RawCoordinator()
        let start = { @Sendable () -> (Worker, Task<Void, any Error>) in
            var configuration = WorkerConfiguration(
                id: "w1", coordinator: coordinator.control, stores: [HostedStore(CounterStore.self)],
                heartbeatInterval: .milliseconds(50))
            configuration.dataDirectory = directory
            configuration.checkpointInterval = .milliseconds(50)
            let worker = Worker(configuration: configuration, context: coordinator.context, logger: TestBus.logger("worker.w1"))
            return (worker, Task { try await worker.run() })
        }
        let (first, firstRun) = start()
        let before = try await onDedicatedThread { try Self.join(coordinator, epoch: 1, thenSendThrough: count) }
        _ = try await SnapshotTests.finish(first, firstRun)
        let saved = try #require(try CheckpointFile(directory: directory, worker: "w1").load())
        let (second, secondRun) = start()
        let again = try await onDedicatedThread { try Self.join(coordinator, epoch: 2, thenSendThrough: count) }
        let events = try await SnapshotTests.finish(second, secondRun)
        coordinator.close()

        #expect(saved.lastApplied == count && saved.acknowledged.count == Int(count), "kept \(saved.acknowledged.count)")
        #expect(events.first == .resumed(sequence: count))
        #expect(again.count == Int(count), "acknowledged again: \(again.count) of \(count)")
        #expect((1...count).allSatisfy { again[$0] == before[$0] }, "the same results, from the checkpoint")
        #expect(SnapshotTests.applied(events, "counter").isEmpty, "nothing applied twice")
    }

    /// Answers a worker's HELLO with a WELCOME of `epoch` (sequence 0), waits until it is live, then sends 1...`last`.
    static func join(_ coordinator: RawCoordinator, epoch: UInt64, thenSendThrough last: UInt64) throws -> [UInt64: StoreResult] {
        _ = try RestartedCoordinatorTests.await(coordinator, heartbeating: epoch, at: 0) { if case .hello = $0 { true } else { nil } }
        try coordinator.send(coordinator.welcome(epoch: epoch, sequence: 0), to: Array("w1".utf8))
        _ = try RestartedCoordinatorTests.await(coordinator, heartbeating: epoch, at: 0) { if case .ready = $0 { true } else { nil } }
        return try send(through: last, epoch: epoch, to: coordinator)
    }

    /// Sends ACTIONs 1 through `last` under `epoch`, a few hundred at a time (within the sockets' high-water marks), and
    /// returns the first result acknowledged for each sequence under that epoch; a sequence never acknowledged is
    /// missing.
    static func send(through last: UInt64, epoch: UInt64, to coordinator: RawCoordinator) throws -> [UInt64: StoreResult] {
        var results: [UInt64: StoreResult] = [:]
        for chunk in stride(from: UInt64(1), through: last, by: 250) {
            let end = min(chunk + 249, last)
            for sequence in chunk...end { try coordinator.send(add(sequence, epoch: epoch), to: Array("w1".utf8)) }
            let deadline = ContinuousClock.now + .seconds(5)
            // Every one of the chunk: the last may have come already, re-sent with its digest when the worker went live.
            while (chunk...end).contains(where: { results[$0] == nil }), ContinuousClock.now < deadline {
                guard let (_, message) = try coordinator.receive(timeout: .milliseconds(50)) else {
                    try coordinator.publish(.heartbeat(.init(epoch: epoch, sequence: 0)))
                    continue
                }
                if case .ack(let ack) = message, ack.epoch == epoch, let result = ack.results.first, results[ack.sequence] == nil {
                    results[ack.sequence] = result
                }
            }
        }
        return results
    }
}
