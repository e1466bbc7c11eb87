import Foundation
import FluxBus
import FluxBusProtocol

/// `snapshot-join`: a `kv` store filled with a million entries on a coordinator that retains little of its log, so
/// that it snapshots the store; then a fresh replica starts and joins from that snapshot. Measured: the time from
/// its start to live, its peak memory and the coordinator's, against the state's size in memory.
enum SnapshotJoinBench {
    /// Entries the coordinator keeps in its log: small, so that the fill compacts and snapshots.
    static let retain = 10_000

    static func run(settings: BenchSettings, entries: Int) async throws -> ScenarioReport {
        var report = ScenarioReport(
            scenario: "snapshot-join",
            operation: "a fresh kv replica joins a store of \(entries) entries of ~100 bytes from the coordinator's snapshot "
                + "(--retain \(retain)): start to live, and peak memory")
        report.workers = 2
        if settings.control != nil { return report.unavailableAgainstACluster() }
        let cluster = try await BenchCluster(executable: settings.executable, coordinatorArguments: ["--retain", "\(retain)"])
        do {
            try cluster.startWorker("bench-kv", stores: ["kv=kv"])
            let client = try await BusClient(endpoint: cluster.control, timeout: .seconds(30))
            defer { Task { await client.close() } }
            try await cluster.waitUntilLive(1, client: client)
            let before = cluster.pid(of: "bench-kv").flatMap(ProcessStats.read(pid:))?.residentBytes ?? 0
            let fillRate = try await StateSizeBenchmarks.fill(client, entries: entries, label: "snapshot-join fill")
            let filled = cluster.pid(of: "bench-kv").flatMap(ProcessStats.read(pid:))?.residentBytes ?? 0
            let stateBytes = max(filled - before, 1)
            // Compaction snapshots a large store only as often as the log grows by its size, so the newest snapshot
            // may be a good way behind: the replica replays the rest from the log.
            let snapshot = try await waitForSnapshot(client, atLeast: UInt64(entries / 2))

            let clock = ContinuousClock()
            let started = clock.now
            try cluster.startWorker("bench-kv-late", stores: ["kv=kv"])
            try await cluster.waitUntilLive(2, client: client, within: .seconds(300))
            let joined = clock.now - started
            let late = cluster.pid(of: "bench-kv-late").flatMap(ProcessStats.read(pid:))
            let coordinator = cluster.coordinatorPID.flatMap(ProcessStats.read(pid:))

            // Both replicas must hold the same state: one more dispatch, and their digests must agree.
            let check = try await client.dispatch(StateSizeBenchmarks.probeAction(0).type, payload: StateSizeBenchmarks.probeAction(0).payload)
            guard check.succeeded, check.outcomes.count == 2, Set(check.outcomes.map(\.digest)).count == 1 else {
                throw BusError(code: .refused, message: "after the join the replicas disagree: \(check.outcomes)")
            }
            report.count = entries
            report.throughput = Double(entries) / (joined.nanoseconds / 1e9)
            report.message = String(
                format: "state ~%.0f MiB in the replica's memory; snapshot at #%llu, the rest replayed; filled at %.0f actions/s; joined in %.1f s; "
                    + "replica peak %.0f MiB; coordinator peak %.0f MiB",
                Double(stateBytes) / 1_048_576, snapshot, fillRate, joined.nanoseconds / 1e9,
                Double(late?.peakResidentBytes ?? 0) / 1_048_576, Double(coordinator?.peakResidentBytes ?? 0) / 1_048_576)
            report.targets.append(.init(metric: "seconds from start to live", comparison: "<=", threshold: 30, value: joined.nanoseconds / 1e9))
            if let late {
                report.targets.append(.init(metric: "replica peak memory / state size", comparison: "<=", threshold: 3,
                                            value: Double(late.peakResidentBytes) / Double(stateBytes)))
            }
            if let coordinator {
                report.targets.append(.init(metric: "coordinator peak memory - state size (MiB)", comparison: "<", threshold: 64,
                                            value: Double(coordinator.peakResidentBytes - stateBytes) / 1_048_576))
            }
            await cluster.stop()
        } catch {
            await cluster.stop()
            throw error
        }
        return report
    }

    /// Waits until the coordinator holds a snapshot of `kv` at `sequence` or later.
    /// - Returns: the snapshot's sequence.
    static func waitForSnapshot(_ client: BusClient, atLeast sequence: UInt64) async throws -> UInt64 {
        let deadline = ContinuousClock.now.advanced(by: .seconds(120))
        var latest: UInt64 = 0
        while ContinuousClock.now < deadline {
            latest = try await client.status().stores.first { $0.name == "kv" }?.snapshotSequence ?? 0
            if latest >= sequence { return latest }
            try await Task.sleep(for: .milliseconds(200))
        }
        throw BusError(code: .unreachable, message: "the coordinator took no snapshot of kv at #\(sequence) or later within 120 s "
            + "(its latest is #\(latest))")
    }
}
