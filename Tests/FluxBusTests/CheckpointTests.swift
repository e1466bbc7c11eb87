import Flux
import Foundation
import FluxBusProtocol
import FluxStores
import Testing
import ZeroMQ

@testable import FluxBus

@Suite("Checkpoints: a worker with --data-dir resumes where it stopped", .timeLimit(.minutes(1)))
struct CheckpointTests {
    /// A fresh directory under the system's temporary directory.
    static func temporaryDirectory() throws -> String {
        let path = (NSTemporaryDirectory() as NSString).appendingPathComponent("fluxbus-checkpoint-\(UUID().uuidString)")
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    static func worker(_ id: String, on bus: TestBus, directory: String, stores: [HostedStore] = [HostedStore(CounterStore.self)]) -> Worker {
        var configuration = WorkerConfiguration(id: id, coordinator: bus.control, stores: stores, heartbeatInterval: TestBus.heartbeat)
        configuration.dataDirectory = directory
        configuration.checkpointInterval = .milliseconds(50)
        return Worker(configuration: configuration, context: bus.context, logger: TestBus.logger("worker.\(id)"))
    }

    static func applied(_ events: [WorkerEvent]) -> [UInt64] {
        events.compactMap { if case .applied(let sequence, "counter", _) = $0 { sequence } else { nil } }
    }

    /// 20 dispatches with w1 up, a graceful stop, 10 more with only w2, then w1 again from its checkpoint: it says
    /// it resumed at 20, applies exactly 21...30, and then acknowledges 31 with the same digest as w2, which applied all of them.
    @Test func aRestartedWorkerResumesAndNeverAppliesTwice() async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let bus = try await TestBus()
        let client = try await bus.client()
        bus.startWorker("w2", [HostedStore(CounterStore.self)])
        let first = Self.worker("w1", on: bus, directory: directory)
        let firstRun = Task { try await first.run() }
        try await bus.waitUntilLive(2, client: client)
        for by in 1...20 { try await client.dispatch(Action(CounterStore.add, .init(by: by))) }
        first.stop()
        try await firstRun.value
        let firstEvents = await collect(first.events)
        #expect(Self.applied(firstEvents) == Array(1...20))

        let file = try #require(try CheckpointFile(directory: directory, worker: "w1").load())
        #expect(file.lastApplied == 20)
        #expect(file.stores.map { String(decoding: $0.state, as: UTF8.self) } == [#"{"value":210}"#])
        #expect(file.acknowledged.map(\.sequence) == Array(1...20))

        _ = try await client.status(until: "w1 is gone") { $0.worker("w1")?.state != .live }
        for by in 21...30 { try await client.dispatch(Action(CounterStore.add, .init(by: by))) }

        let second = Self.worker("w1", on: bus, directory: directory)
        let secondRun = Task { try await second.run() }
        _ = try await client.status(until: "w1 is live again at 30") {
            $0.worker("w1")?.state == .live && $0.worker("w1")?.lastApplied == 30
        }
        // One more with both up: each replica acknowledges with the digest of its state.
        let last = try await client.dispatch(Action(CounterStore.add, .init(by: 1)))
        second.stop()
        try await secondRun.value
        let secondEvents = await collect(second.events)
        await client.close()
        await bus.stop()

        #expect(secondEvents.first == .resumed(sequence: 20))
        #expect(Self.applied(secondEvents) == Array(21...31))
        let expected = StateDigest.fnv1a64(Array(#"{"value":466}"#.utf8))
        #expect(last.sequence == 31)
        #expect(Set(last.outcomes.map(\.worker)) == ["w1", "w2"])
        #expect(last.outcomes.allSatisfy { $0.status == .ok && $0.digest == expected }, "\(last.outcomes)")
        let saved = try #require(try CheckpointFile(directory: directory, worker: "w1").load())
        #expect(saved.lastApplied == 31)
        #expect(saved.stores.map { String(decoding: $0.state, as: UTF8.self) } == [#"{"value":466}"#])
    }

    /// A checkpoint the worker cannot use stops it before it joins, with an error naming the file and the way out.
    @Test(arguments: ["corrupt", "other stores", "bad digest", "newer format"])
    func anUnusableCheckpointStopsTheWorker(_ damage: String) async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = CheckpointFile(directory: directory, worker: "w1")
        let state = Data(#"{"value":3}"#.utf8)
        var checkpoint = Checkpoint(
            worker: "w1", lastApplied: 2,
            stores: [.init(name: "counter", digest: StateDigest.fnv1a64(state), state: state)], acknowledged: [])
        let expectedText: String
        switch damage {
        case "corrupt":
            try file.write(checkpoint)
            let bytes = try #require(FileManager.default.contents(atPath: file.path))
            try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: file.path))
            expectedText = "corrupt"
        case "other stores":
            checkpoint.stores[0].name = "hits"
            try file.write(checkpoint)
            expectedText = "holds stores hits, but this worker hosts counter"
        case "bad digest":
            checkpoint.stores[0].digest &+= 1
            try file.write(checkpoint)
            expectedText = "does not match its digest"
        default:
            checkpoint.format = Checkpoint.currentFormat + 1
            try file.write(checkpoint)
            expectedText = "in format \(Checkpoint.currentFormat + 1)"
        }

        let bus = try await TestBus()
        let worker = Self.worker("w1", on: bus, directory: directory)
        let error = await #expect(throws: BusError.self) { try await worker.run() }
        let client = try await bus.client()
        let status = try await client.status()
        await client.close()
        await bus.stop()

        #expect(error?.code == .usage)
        #expect(error?.message.contains(file.path) == true, "\(String(describing: error))")
        #expect(error?.message.contains(expectedText) == true, "\(String(describing: error))")
        #expect(error?.message.contains("move it aside") == true)
        #expect(status.workers.isEmpty, "the worker joined despite its checkpoint")
        // The file is left as it was, for the operator.
        #expect(FileManager.default.fileExists(atPath: file.path))
    }

    /// Digests use all 64 bits; they survive the file exactly.
    @Test func aCheckpointRoundTripsExactly() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = CheckpointFile(directory: directory, worker: "w9")
        let checkpoint = Checkpoint(
            worker: "w9", lastApplied: .max - 1, appliedEpoch: 0x0000_019A_B3C4_D5E6,
            stores: [.init(name: "kv", appliedThrough: .max, digest: .max, state: Data("{}".utf8))],
            acknowledged: [.init(sequence: 7, results: [.init(store: "kv", status: 1, message: "no", output: Data([1, 2]), digest: 0xFEDC_BA98_7654_3210)])])
        try file.write(checkpoint)
        #expect(try file.load() == checkpoint)
        #expect(!FileManager.default.fileExists(atPath: file.path + ".tmp"))
        // A checkpoint from before version 7 does not say the epoch of its applied entry: unknown, not 0-as-a-value.
        var older = checkpoint
        older.appliedEpoch = nil
        try file.write(older)
        #expect(try file.load() == older)
    }

    /// A checkpoint that cannot be written (a full disk: the temporary file is /dev/full here) fails naming the file
    /// and the cause, and leaves no temporary file behind, nor touches the checkpoint in place (a probe found a full
    /// disk left holding a full-size `.tmp` after every failed write).
    @Test func aFailedWriteLeavesNothingBehind() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = CheckpointFile(directory: directory, worker: "w9")
        let first = Checkpoint(worker: "w9", lastApplied: 1, stores: [.init(name: "kv", digest: 1, state: Data("{}".utf8))], acknowledged: [])
        try file.write(first)
        try FileManager.default.createSymbolicLink(atPath: file.path + ".tmp", withDestinationPath: "/dev/full")
        var second = first
        second.lastApplied = 2
        let error = #expect(throws: BusError.self) { try file.write(second) }
        #expect(error?.message.contains("cannot write \(file.path).tmp: No space left on device") == true, "\(String(describing: error))")
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: file.path + ".tmp")) == nil, "the temporary file is gone")
        #expect(try file.load() == first, "the checkpoint in place is untouched")
    }

    /// What a dependent read survives the file, so that a worker restarted after a power cut acknowledges again with
    /// it; a checkpoint written before it existed reads as not saying.
    @Test func aCheckpointKeepsWhatADependentRead() throws {
        let read = StoreResult(store: "ledger", status: .ok, digest: 7, readDigest: 0xA9ED_595D_242B_E52E)
        let kept = try JSONDecoder().decode(Checkpoint.Result.self, from: JSONEncoder().encode(Checkpoint.Result(read)))
        #expect(kept.storeResult == read)
        let older = Data(#"{"store":"ledger","status":0,"message":"","digest":7}"#.utf8)
        #expect(try JSONDecoder().decode(Checkpoint.Result.self, from: older).storeResult?.readDigest == ReadDigest.none)
        #expect(Checkpoint.Result(StoreResult(store: "kv", status: .ok, digest: 1)).readDigest == nil)
    }
}
