import Foundation
import FluxBus
import FluxBusProtocol

/// `large-state` and `snapshot-join`: a `kv` store of a million entries of about 100 bytes, to show that a dispatch
/// costs the same whatever the size of the state, and that a state that size still travels to a new replica.
enum StateSizeBenchmarks {
    /// The `kv.set` that fills entry `n`: a value of about 100 bytes of JSON.
    static func fillAction(_ n: Int) -> BatchAction {
        let json = #"{"key":"entry-\#(n)","value":{"name":"item \#(n)","qty":\#(n % 1000),"tags":["a","b"],"note":"\#(String(repeating: "x", count: 48))"}}"#
        return BatchAction(actionType: "kv.set", payload: Array(json.utf8))
    }

    /// The measured `kv.set`: one of a thousand probe keys, so the store's size does not change while measuring.
    static func probeAction(_ n: Int) -> (type: String, payload: [UInt8]) {
        ("kv.set", Array(#"{"key":"probe-\#(n % 1000)","value":{"n":\#(n)}}"#.utf8))
    }

    static func shape(_ name: String, settings: BenchSettings) -> ClusterBenchmarks.Shape {
        ClusterBenchmarks.Shape(
            name: name, operation: "", workers: [("bench-kv", ["kv=kv"])], stores: ["kv"], action: probeAction)
    }

    /// Fills the store with `entries` actions in batches of 1,000, four outstanding.
    /// - Returns: actions per second.
    static func fill(_ client: BusClient, entries: Int, label: String) async throws -> Double {
        let progress = ProgressBar.make(label)
        defer { progress?.finish() }
        let clock = ContinuousClock()
        let started = clock.now
        let batches = stride(from: 0, to: entries, by: 1_000).map { $0..<min($0 + 1_000, entries) }
        try await withThrowingTaskGroup(of: Int.self) { group in
            var next = 0
            var done = 0
            func send() {
                let batch = batches[next]
                next += 1
                group.addTask {
                    try await ClusterBenchmarks.dispatchBatch(client, batch.map(fillAction))
                    return batch.count
                }
            }
            while next < min(4, batches.count) { send() }
            while let count = try await group.next() {
                done += count
                progress?.update(done, of: entries)
                if next < batches.count { send() }
            }
        }
        return Double(entries) / ((clock.now - started).nanoseconds / 1e9)
    }

    /// `large-state`: lock-step `kv.set` on an empty store, then the store is filled with `entries`, then the same
    /// dispatches again. The target compares the two medians.
    static func largeState(settings: BenchSettings, count: Int, entries: Int) async throws -> ScenarioReport {
        let shape = shape("large-state", settings: settings)
        var report = ScenarioReport(
            scenario: "large-state",
            operation: "lock-step kv.set to a kv store on 1 worker process holding \(entries) entries of ~100 bytes, "
                + "vs. the same dispatches on the empty store")
        report.workers = 1
        if settings.control != nil { return report.unavailableAgainstACluster() }
        // The log retains everything, so that no compaction snapshot lands among the measured dispatches: this
        // scenario is about a dispatch's cost (snapshot-join is about snapshots).
        try await ClusterBenchmarks.withCluster(shape, settings: settings, retain: entries * 2 + 100_000) { client, pid in
            for n in 0..<settings.warmup(for: count) { try await ClusterBenchmarks.dispatch(client, probeAction(n)) }
            var empty = ScenarioReport(scenario: "", operation: "")
            try await empty.measureLockStep(count: count, coordinator: nil, progress: ProgressBar.make("large-state empty")) { n in
                try await ClusterBenchmarks.dispatch(client, probeAction(n))
            }
            let fillRate = try await fill(client, entries: entries, label: "large-state fill")
            try await report.measureLockStep(count: count, coordinator: pid, progress: ProgressBar.make("large-state full")) { n in
                try await ClusterBenchmarks.dispatch(client, probeAction(n))
            }
            guard let emptyMedian = empty.latency?.p50, let fullMedian = report.latency?.p50 else { return }
            report.message = String(
                format: "empty store: p50 %.0f µs, p99 %.0f µs; filled with %d entries at %.0f actions/s (batches of 1,000, 4 outstanding)",
                emptyMedian, empty.latency?.p99 ?? 0, entries, fillRate)
            report.targets.append(.init(metric: "p50 with \(entries) entries / p50 empty", comparison: "<=", threshold: 1.2,
                                        value: fullMedian / emptyMedian))
        }
        return report
    }
}

extension ScenarioReport {
    /// This scenario, reported unavailable: it starts its own cluster, with options a running one may lack.
    func unavailableAgainstACluster() -> ScenarioReport {
        ScenarioReport(scenario: scenario, operation: operation, outcome: .unavailable,
                       message: "needs a cluster started by the benchmark; it does not run against --control")
    }
}
