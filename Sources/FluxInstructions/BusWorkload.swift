import FluxBus
import FluxBusProtocol
import FluxBusTools
import FluxStores
import Foundation
import Logging
import ZeroMQ

/// A coordinator, a worker hosting `counter` and a client in this one process, over `inproc://`, and once the worker
/// is live, `count` of one of the ``Scenario``s. Run with 0 and with N, under callgrind, the difference over N is
/// what one operation costs each of them, in instructions (docs/BENCHMARKS.md, "Dispatch tracing"). The
/// coordinator's log is in memory, or with `durable` a SQLite log in a temporary directory, as shipped
/// (`--sync always`: its fsyncs are system calls, which callgrind does not count).
enum BusWorkload {
    enum Scenario: String {
        /// Lock-step `counter.add` dispatches.
        case bus
        /// Actions in batches of 1,000, 64 bytes each, as `fluxbus bench batch` sends them.
        case batch
        /// Lock-step STATUS requests.
        case status
        /// Lock-step `country-update` dispatches through country ← city ← price, each store on a worker of its own
        /// (w1, w2, w3), as `fluxbus bench flight` runs them: each thread's count is its part of the chain.
        case flight
        /// `count` actions in batches, then a second worker that catches up on all of them: its own loop thread's
        /// count is what replaying them cost it (with `--separate-threads=yes`).
        case catchUp = "catch-up"
    }

    /// - Parameter syncOff: with `durable`, the log is never synced (`--sync off`, the `durable-off` bench scenario).
    static func run(_ count: Int, durable: Bool, syncOff: Bool = false, scenario: Scenario) async throws {
        var quiet = Logger(label: "flux-instructions")
        quiet.logLevel = .critical
        let context = try ZMQContext()
        // Timers run by the clock, not per dispatch, and a run under callgrind is slow and its speed varies: long
        // heartbeats and ticks keep the count to the dispatches' own work.
        var configuration = CoordinatorConfiguration(
            controlEndpoint: "inproc://instructions-control", publishEndpoint: "inproc://instructions-publish",
            ackTimeout: .seconds(600), heartbeatInterval: .seconds(60))
        configuration.tickInterval = .seconds(5)
        // Under callgrind a batch takes longer than the 200 ms after which the coordinator sends an unacknowledged
        // ACTION again: those re-sends, and the worker's answers to them, came and went from run to run.
        configuration.firstResend = .seconds(600)
        // Likewise a lock-step dispatch outlasts the 1 ms for which a COMPLETED waits to travel with the next ACTION,
        // which it does in a shipped run: alone, it cost a second message and wake-up from run to run.
        configuration.completedWindow = .seconds(600)
        if durable {
            configuration.dataDirectory = FileManager.default.temporaryDirectory
                .appendingPathComponent("flux-instructions-\(getpid())").path
            if syncOff { configuration.sync = .off }
        }
        defer { configuration.dataDirectory.map { try? FileManager.default.removeItem(atPath: $0) } }
        let coordinator = Coordinator(configuration: configuration, context: context, logger: quiet)
        Task { try await coordinator.run() }
        _ = try await coordinator.endpoints
        let hosted = scenario == .flight ? Flight.stores.map { [HostedStore($0)] } : [[HostedStore(CounterStore.self)]]
        var workerConfiguration = WorkerConfiguration(id: "w1", coordinator: configuration.controlEndpoint, stores: hosted[0])
        workerConfiguration.heartbeatInterval = .seconds(60)
        // As `fluxbus worker` runs: nothing reads its events, and an `applied` event per action cost the worker's
        // thread about 3,600 instructions (an AsyncStream yield), which the shipped worker never pays.
        workerConfiguration.reportsEvents = false
        for (index, stores) in hosted.enumerated() {
            var configuration = workerConfiguration
            configuration.id = "w\(index + 1)"
            configuration.stores = stores
            let worker = Worker(configuration: configuration, context: context, logger: quiet)
            Task { try await worker.run() }
        }
        let client = try await BusClient(endpoint: configuration.controlEndpoint, context: context)
        while try await client.status().workers.filter({ $0.state == .live }).count < hosted.count {
            try await Task.sleep(for: .milliseconds(20))
        }
        switch scenario {
        case .status:
            for _ in 0..<count { _ = try await client.status() }
        case .bus:
            try await lockStep(count, "counter.add", [Array(#"{"by":1}"#.utf8)], client: client)
        case .flight:
            // As `fluxbus bench flight` sends them, at its default 64 bytes.
            try await lockStep(count, "country-update", ClusterBenchmarks.flightPayloads(bytes: 64), client: client)
        case .batch:
            try await dispatchBatches(count, client: client)
        case .catchUp:
            try await dispatchBatches(count, client: client)
            var replicaConfiguration = workerConfiguration
            replicaConfiguration.id = "w2"
            let replica = Worker(configuration: replicaConfiguration, context: context, logger: quiet)
            Task { try await replica.run() }
            while try await client.status().workers.filter({ $0.state == .live }).count < 2 {
                try await Task.sleep(for: .milliseconds(20))
            }
        }
    }

    /// `count` dispatches of `actionType`, one at a time, with `payloads` in turn.
    static func lockStep(_ count: Int, _ actionType: String, _ payloads: [[UInt8]], client: BusClient) async throws {
        for n in 0..<count {
            let result = try await client.dispatch(actionType, payload: payloads[n % payloads.count])
            guard result.succeeded else { throw BusWorkloadFailure(description: "a dispatch failed: \(result.stores)") }
        }
    }

    /// `count` actions in DISPATCH_BATCHes of up to 1,000, each waited for.
    static func dispatchBatches(_ count: Int, client: BusClient) async throws {
        // As `fluxbus bench batch` sends them: 64-byte payloads, DISPATCH_BATCH of 1,000, one at a time here.
        let payload = Array((#"{"by":1,"pad":""# + String(repeating: "x", count: 47) + #""}"#).utf8)
        var sent = 0
        while sent < count {
            let size = min(1_000, count - sent)
            let result = try await client.dispatchBatch(
                Array(repeating: BatchAction(actionType: "counter.add", payload: payload), count: size))
            guard result.failures.isEmpty else { throw BusWorkloadFailure(description: "a batch failed: \(result.failures)") }
            sent += size
        }
    }

    struct BusWorkloadFailure: Error, CustomStringConvertible {
        let description: String
    }
}
