import Foundation
import FluxBus
import FluxBusProtocol

/// The distributed scenarios that dispatch through a coordinator: `workers-N`, `flight`, `durable-*`, `memory`,
/// and the `batch` slot.
package enum ClusterBenchmarks {
    /// One dispatch scenario's shape.
    struct Shape {
        var name: String
        var operation: String
        /// Worker ids and the `--store` specs of each.
        var workers: [(id: String, stores: [String])]
        /// Stores that must exist on an existing cluster.
        var stores: [String]
        var coordinatorArguments: [String] = []
        /// The action for the n-th dispatch.
        var action: @Sendable (Int) -> (type: String, payload: [UInt8])
    }

    /// `counter` (kind counter) on `workers` processes, dispatching `counter.add`.
    static func counterShape(_ name: String, workers: Int, settings: BenchSettings) -> Shape {
        let payload = PaddedJSON.make(#""by":1"#, bytes: settings.payloadBytes)
        return Shape(
            name: name, operation: "one lock-step counter.add (\(payload.count)-byte payload) to a store replicated on \(workers) worker process(es), client request to RESULT",
            workers: (1...workers).map { ("bench-w\($0)", ["counter=counter"]) }, stores: ["counter"],
            action: { _ in ("counter.add", payload) })
    }

    /// The flight chain on three worker processes: country ← city ← price, each wait across processes.
    static func flightShape(settings: BenchSettings) -> Shape {
        let payloads = flightPayloads(bytes: settings.payloadBytes)
        return Shape(
            name: "flight", operation: "one lock-step country-update through country ← city ← price on 3 worker processes",
            workers: [("bench-country", ["country=country"]), ("bench-city", ["city=city"]), ("bench-price", ["price=price"])],
            stores: ["country", "city", "price"],
            action: { n in ("country-update", payloads[n % payloads.count]) })
    }

    /// The `country-update` payloads `flight` sends in turn, each padded to `bytes` (FluxInstructions sends them too).
    package static func flightPayloads(bytes: Int) -> [[UInt8]] {
        ["France", "Japan", "Germany", "Italy", "Spain"].map { PaddedJSON.make(#""country":"\#($0)""#, bytes: bytes) }
    }

    /// Runs `body` with a client on the scenario's cluster: the one at `settings.control`, or one started here and
    /// stopped afterwards whatever happens.
    static func withCluster<T>(
        _ shape: Shape, settings: BenchSettings, retain: Int? = nil,
        _ body: (BusClient, _ coordinatorPID: Int32?) async throws -> T
    ) async throws -> T {
        if let control = settings.control {
            let client = try await BusClient(endpoint: control, timeout: .seconds(10))
            do {
                let status = try await client.status()
                let missing = shape.stores.filter { name in !status.stores.contains { $0.name == name } }
                guard missing.isEmpty else {
                    throw BusError(code: .usage, message: "the cluster at \(control) has no store \(missing.joined(separator: ", ")); "
                        + "start a worker hosting it, e.g. `fluxbus worker --id bench-w1 --coordinator \(control)"
                        + missing.map { " --store \($0)=\($0)" }.joined() + "`")
                }
                let value = try await body(client, settings.coordinatorPID)
                await client.close()
                return value
            } catch {
                await client.close()
                throw error
            }
        }
        var arguments = shape.coordinatorArguments
        if let retain { arguments += ["--retain", "\(retain)"] }
        let cluster = try await BenchCluster(executable: settings.executable, coordinatorArguments: arguments)
        do {
            for worker in shape.workers { try cluster.startWorker(worker.id, stores: worker.stores) }
            let client = try await BusClient(endpoint: cluster.control, timeout: .seconds(10))
            do {
                try await cluster.waitUntilLive(shape.workers.count, client: client)
                let value = try await body(client, cluster.coordinatorPID)
                await client.close()
                await cluster.stop()
                return value
            } catch {
                await client.close()
                throw error
            }
        } catch {
            await cluster.stop()
            throw error
        }
    }

    /// Dispatches outstanding at once when measuring throughput rather than latency.
    static let pipelineWindow = 32

    /// Lock-step dispatches, then the same count again with ``pipelineWindow`` outstanding: each waits for the previous one's RESULT. Latency is client request to RESULT.
    static func lockStep(_ shape: Shape, settings: BenchSettings, count: Int) async throws -> ScenarioReport {
        var report = ScenarioReport(scenario: shape.name, operation: shape.operation)
        report.workers = settings.control == nil ? shape.workers.count : nil
        let warmup = settings.warmup(for: count)
        try await withCluster(shape, settings: settings) { client, pid in
            if settings.control != nil {
                let status = try await client.status()
                report.workers = status.workers.filter { $0.state == .live && $0.stores.contains(where: shape.stores.contains) }.count
            }
            for n in 0..<warmup { try await dispatch(client, shape.action(n)) }
            let progress = ProgressBar.make(shape.name)
            defer { progress?.finish() }
            try await report.measureLockStep(count: count, coordinator: pid, progress: progress) { n in
                try await dispatch(client, shape.action(n))
            }
            if settings.lockStepOnly { return }
            // Then the rate with the coordinator's queue kept full, as many clients (or one that does not wait)
            // would keep it: the bus still runs one dispatch at a time, but no client round trip sits between two.
            let pipelinedStart = ContinuousClock.now
            try await pipelined(client, count: count, window: pipelineWindow, action: shape.action)
            report.pipelinedThroughput = Double(count) / ((ContinuousClock.now - pipelinedStart).nanoseconds / 1e9)
            report.pipelineWindow = pipelineWindow
        }
        return report
    }

    /// `status-rtt`: lock-step STATUS requests, client → coordinator → client with no worker on the path, to split
    /// a dispatch's time between the client and coordinator hop and the worker hop.
    static func statusRoundTrip(settings: BenchSettings, count: Int) async throws -> ScenarioReport {
        let shape = counterShape("status-rtt", workers: 1, settings: settings)
        var report = ScenarioReport(scenario: "status-rtt", operation: "one lock-step STATUS request, client to coordinator and back (no worker on the path)")
        try await withCluster(shape, settings: settings) { client, pid in
            for _ in 0..<settings.warmup(for: count) { _ = try await client.status() }
            try await report.measureLockStep(count: count, coordinator: pid, progress: nil) { _ in _ = try await client.status() }
        }
        return report
    }

    /// Dispatches and checks that every store succeeded.
    static func dispatch(_ client: BusClient, _ action: (type: String, payload: [UInt8])) async throws {
        let result = try await client.dispatch(action.type, payload: action.payload)
        guard result.succeeded else {
            let failure = result.stores.first { $0.status != .ok }
            throw BusError(code: .refused, message: "dispatch #\(result.sequence) of \(action.type) did not succeed: "
                + "\(failure?.name ?? "?") \(failure?.status.description ?? "") \(failure?.error ?? "")")
        }
    }

    /// Dispatches `count` actions with up to `window` outstanding at once; calls `after` with the number done
    /// after each one completes, in order of completion.
    static func pipelined(
        _ client: BusClient, count: Int, window: Int, action: @escaping @Sendable (Int) -> (type: String, payload: [UInt8]),
        after: (Int) -> Void = { _ in }
    ) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            var started = 0
            var done = 0
            while started < min(window, count) {
                let n = started
                group.addTask { try await dispatch(client, action(n)) }
                started += 1
            }
            while try await group.next() != nil {
                done += 1
                after(done)
                if started < count {
                    let n = started
                    group.addTask { try await dispatch(client, action(n)) }
                    started += 1
                }
            }
        }
    }

    /// `durable-always` / `durable-off`: `workers-1` with the coordinator's log synced as named.
    static func durable(_ sync: String, settings: BenchSettings, count: Int) async throws -> ScenarioReport {
        let name = "durable-\(sync)"
        var shape = counterShape(name, workers: settings.workers ?? 1, settings: settings)
        shape.operation = "as workers-\(shape.workers.count), the coordinator on a SQLite log with --sync \(sync)"
        if settings.control != nil {
            return ScenarioReport(scenario: name, operation: shape.operation, outcome: .unavailable,
                                  message: "needs a coordinator started by the benchmark; it does not run against --control")
        }
        // The coordinator's log is its default ./fluxbus-data, inside the cluster's own temporary directory.
        shape.coordinatorArguments = ["--sync", sync]
        return try await lockStep(shape, settings: settings, count: count)
    }

    /// `memory`: `count` dispatches, 32 outstanding at a time, sampling the coordinator's VmRSS at every 10%.
    static func memory(settings: BenchSettings, count: Int) async throws -> ScenarioReport {
        let shape = counterShape("memory", workers: settings.workers ?? 1, settings: settings)
        var report = ScenarioReport(
            scenario: "memory",
            operation: "counter.add on \(shape.workers.count) worker process(es), 32 outstanding, coordinator VmRSS sampled every 10%")
        report.workers = shape.workers.count
        try await withCluster(shape, settings: settings) { client, pid in
            guard let pid else {
                throw BusError(code: .usage, message: "memory needs the coordinator's process id: pass --coordinator-pid with --control")
            }
            let before = ProcessStats.read(pid: pid)
            var samples: [Int] = []
            let progress = ProgressBar.make("memory")
            defer { progress?.finish() }
            let tenth = max(count / 10, 1)
            let clock = ContinuousClock()
            let started = clock.now
            try await pipelined(client, count: count, window: pipelineWindow, action: shape.action) { done in
                progress?.update(done, of: count)
                if done % tenth == 0 || done == count, samples.count < 10 {
                    samples.append(ProcessStats.read(pid: pid)?.residentBytes ?? 0)
                }
            }
            let elapsed = clock.now - started
            let after = ProcessStats.read(pid: pid)
            report.count = count
            report.throughput = Double(count) / (elapsed.nanoseconds / 1e9)
            report.rssSamples = samples
            if let first = samples.first, let last = samples.last, first > 0 {
                report.rssGrowthPercent = (Double(last) - Double(first)) / Double(first) * 100
                report.targets.append(.init(metric: "VmRSS growth from 10% to 100% (%)", comparison: "<", threshold: 10,
                                            value: report.rssGrowthPercent!))
            }
            report.recordCoordinator(from: before, to: after)
        }
        return report
    }

    /// Batches outstanding at once in `batch`: while one is in flight the coordinator logs the next, so the log's
    /// commit and the workers' applying overlap.
    static let batchWindow = 4

    /// `batch`: `count` counter.add actions in DISPATCH_BATCH requests of `batchSize`, ``batchWindow`` requests
    /// outstanding; the latency recorded is per batch (request to BATCH_RESULT), the throughput in actions per second.
    static func batch(settings: BenchSettings, count: Int, batchSize: Int) async throws -> ScenarioReport {
        var shape = counterShape("batch", workers: settings.workers ?? 1, settings: settings)
        shape.operation = "counter.add in batches of \(batchSize) (one DISPATCH_BATCH each, answered when all completed), "
            + "\(batchWindow) outstanding, to a store on \(shape.workers.count) worker process(es); latency per batch"
        var report = ScenarioReport(scenario: "batch", operation: shape.operation)
        report.workers = shape.workers.count
        let action = shape.action(0)
        let batch = Array(repeating: BatchAction(actionType: action.type, payload: action.payload), count: batchSize)
        let batches = max(1, count / batchSize)
        try await withCluster(shape, settings: settings) { client, pid in
            for _ in 0..<max(1, settings.warmup(for: batches)) { try await dispatchBatch(client, batch) }
            let progress = ProgressBar.make("batch")
            defer { progress?.finish() }
            let before = pid.flatMap(ProcessStats.read(pid:))
            var recorder = LatencyRecorder()
            let clock = ContinuousClock()
            let started = clock.now
            try await withThrowingTaskGroup(of: Duration.self) { group in
                var sent = 0
                var done = 0
                func send() {
                    sent += 1
                    group.addTask {
                        let start = clock.now
                        try await dispatchBatch(client, batch)
                        return clock.now - start
                    }
                }
                while sent < min(batchWindow, batches) { send() }
                while let latency = try await group.next() {
                    recorder.record(latency)
                    done += 1
                    progress?.update(done * batchSize, of: batches * batchSize)
                    if sent < batches { send() }
                }
            }
            let elapsed = clock.now - started
            let after = pid.flatMap(ProcessStats.read(pid:))
            report.count = batches * batchSize
            report.latency = recorder.summary
            report.throughput = Double(batches * batchSize) / (elapsed.nanoseconds / 1e9)
            report.pipelineWindow = batchWindow
            report.targets.append(.init(metric: "actions per second", comparison: ">=", threshold: 200_000, value: report.throughput!))
            report.recordCoordinator(from: before, to: after)
        }
        return report
    }

    /// Dispatches one batch and checks that every action succeeded.
    static func dispatchBatch(_ client: BusClient, _ actions: [BatchAction]) async throws {
        let result = try await client.dispatchBatch(actions)
        guard let failure = result.failures.first else { return }
        throw BusError(code: .refused, message: "batch #\(result.firstSequence)…#\(result.lastSequence): action #\(failure.sequence) "
            + "\(failure.outcome.store) \(failure.outcome.status) \(failure.outcome.message)")
    }
}

extension ScenarioReport {
    /// Runs `operation` `count` times, each after the previous one returned, and records each one's latency, the
    /// rate, and the coordinator's CPU and memory over the run.
    mutating func measureLockStep(
        count: Int, coordinator pid: Int32?, progress: ProgressBar?, _ operation: (Int) async throws -> Void
    ) async throws {
        let before = pid.flatMap(ProcessStats.read(pid:))
        var recorder = LatencyRecorder()
        let clock = ContinuousClock()
        let started = clock.now
        for n in 0..<count {
            let start = clock.now
            try await operation(n)
            recorder.record(clock.now - start)
            progress?.update(n + 1, of: count)
        }
        let elapsed = clock.now - started
        self.count = count
        latency = recorder.summary
        throughput = Double(count) / (elapsed.nanoseconds / 1e9)
        recordCoordinator(from: before, to: pid.flatMap(ProcessStats.read(pid:)))
    }
}
