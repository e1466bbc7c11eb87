import Foundation
import FluxBus
import FluxBusProtocol
import FluxStores
import Logging

/// `catch-up`: a log of `count` actions, then a fresh replica of `counter` joins and replays it. The replica is an
/// in-process ``Worker`` connected over tcp, so its events time the replay precisely.
enum CatchUpBench {
    static func run(settings: BenchSettings, count: Int) async throws -> ScenarioReport {
        let shape = ClusterBenchmarks.counterShape("catch-up", workers: settings.workers ?? 1, settings: settings)
        var report = ScenarioReport(
            scenario: "catch-up",
            operation: "a fresh counter replica replays a log of \(count) actions: time from WELCOME to live at the last sequence")
        report.workers = shape.workers.count
        // The log retains all of it (no compaction, so no snapshot): the replica catches up by replay alone.
        try await ClusterBenchmarks.withCluster(shape, settings: settings, retain: max(count + 1_000, BusDefaults.retain)) { client, pid in
            // The log is written in batches, which is faster and records the same entries as one by one.
            let progress = ProgressBar.make("catch-up log")
            let action = shape.action(0)
            var written = 0
            while written < count {
                let size = min(1_000, count - written)
                try await ClusterBenchmarks.dispatchBatch(
                    client, Array(repeating: BatchAction(actionType: action.type, payload: action.payload), count: size))
                written += size
                progress?.update(written, of: count)
            }
            progress?.finish()
            let target = try await client.status().sequence

            let endpoint = settings.control ?? client.endpoint
            var logger = Logger(label: "fluxbus.bench.catch-up")
            logger.logLevel = .warning
            var configuration = WorkerConfiguration(
                id: "bench-catch-up-\(UUID().uuidString.prefix(6))", coordinator: endpoint, stores: [HostedStore(CounterStore.self)])
            // Only its milestones: `fluxbus worker` reports no events at all, and one per replayed action would
            // measure this process waking for each (a quarter of the replica's thread), not the replay.
            configuration.reportsAppliedEvents = false
            let worker = Worker(configuration: configuration, logger: logger)
            // Its id is this run's alone: its crash marker would stay in the temporary directory, one per run.
            defer { Worker.removeCrashMarker(worker: configuration.id) }
            let before = pid.flatMap(ProcessStats.read(pid:))
            let clock = ContinuousClock()
            let started = clock.now
            let running = Task { try await worker.run() }
            var welcomed: ContinuousClock.Instant?
            var live: (ContinuousClock.Instant, UInt64)?
            let timeout = Task {
                try await Task.sleep(for: .seconds(120))
                worker.stop()
            }
            var refusal: String?
            for await event in worker.events {
                switch event {
                case .welcomed: welcomed = clock.now
                case .live(let sequence): live = (clock.now, sequence)
                case .rejected(_, let reason): refusal = reason
                default: break
                }
                if live != nil || refusal != nil { break }
            }
            // Stopped on every way out of the loop, a refusal included, rather than left to the timeout.
            timeout.cancel()
            worker.stop()
            _ = try? await running.value
            if let refusal { throw BusError(code: .refused, message: "the coordinator refused the replica: \(refusal)") }
            let after = pid.flatMap(ProcessStats.read(pid:))
            guard let welcomed, let (liveAt, sequence) = live else {
                throw BusError(code: .unreachable, message: "the replica did not become live within 120 seconds")
            }
            guard sequence >= target else {
                throw BusError(code: .protocolViolation, message: "the replica went live at #\(sequence), before the log's end #\(target)")
            }
            let replay = liveAt - welcomed
            report.count = Int(sequence)
            report.throughput = Double(sequence) / (replay.nanoseconds / 1e9)
            report.message = String(
                format: "start to WELCOME %.1f ms; WELCOME to live at #%llu %.1f ms",
                (welcomed - started).nanoseconds / 1e6, sequence, replay.nanoseconds / 1e6)
            report.targets.append(.init(metric: "actions replayed per second", comparison: ">=", threshold: 500_000,
                                        value: report.throughput!))
            report.recordCoordinator(from: before, to: after)
        }
        return report
    }
}
