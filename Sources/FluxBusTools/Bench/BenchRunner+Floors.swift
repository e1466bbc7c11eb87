import FluxBus
import Foundation

/// The raw ZeroMQ round trips the bus is measured against: the baseline, and the floors in a scenario's own shape
/// (``ShapeFloors``).
extension BenchRunner {
    /// Each floor in a scenario's shape, and the scenario it is the floor of.
    static let shapeFloors: [(floor: String, of: String)] = [
        ("flight-floor", "flight"), ("flight-floor-unsynced", "flight"), ("status-floor", "status-rtt"),
    ]

    /// The raw ZeroMQ round trip through a relay and an echo process.
    static func baseline(_ settings: BenchSettings) async throws -> ScenarioReport {
        let endpoint = "tcp://127.0.0.1:\(try FreePort.next())"
        return try await rawRoundTrip(
            "baseline",
            operation: "raw ZeroMQ round trip, \(max(settings.payloadBytes, 8))-byte frame: client DEALER -> relay ROUTER -> echo DEALER -> relay -> client, tcp 127.0.0.1",
            endpoint: endpoint, settings: settings
        ) { _ in
            [("relay", ["relay", "--endpoint", endpoint]), ("echo", ["echo", "--endpoint", endpoint])]
        }
    }

    /// A floor in a scenario's shape: `flight-floor`, `flight-floor-unsynced` or `status-floor`.
    static func shapeFloor(_ name: String, settings: BenchSettings) async throws -> ScenarioReport {
        let control = "tcp://127.0.0.1:\(try FreePort.next())"
        if name == "status-floor" {
            return try await rawRoundTrip(
                name, operation: "raw ZeroMQ: client DEALER -> relay ROUTER -> back to the client, the two hops of a STATUS request",
                endpoint: control, settings: settings
            ) { _ in [("relay", ["reflect", "--endpoint", control])] }
        }
        let publish = "tcp://127.0.0.1:\(try FreePort.next())"
        let synced = name == "flight-floor"
        let operation = "raw ZeroMQ in flight's shape: the relay publishes to 3 stage processes, stage 1 answers, the relay "
            + "hands over to stage 2, then 3, then answers the client (8 messages on the path)"
            + (synced ? "; an fdatasync of a 4 KiB page after the publish and before each hand-over, as --sync always" : "; no sync")
        return try await rawRoundTrip(name, operation: operation, endpoint: control, settings: settings) { directory in
            let sync = synced ? ["--sync-file", directory.appendingPathComponent("floor.pages").path] : []
            return [("relay", ["flight-relay", "--endpoint", control, "--publish", publish] + sync)]
                + (1...ShapeFloors.stages).map { ("stage-\($0)", ["stage", "--stage", "\($0)", "--endpoint", control, "--publish", publish]) }
        }
    }

    /// Starts `fluxbus bench-peer` processes (the first stands where the coordinator stands) and measures lock-step
    /// round trips of a client DEALER connected to `endpoint` through them.
    private static func rawRoundTrip(
        _ scenario: String, operation: String, endpoint: String, settings: BenchSettings,
        peers: (URL) -> [(name: String, arguments: [String])]
    ) async throws -> ScenarioReport {
        let count = settings.count(default: 10_000, quick: 200)
        let processes = try LocalProcesses(prefix: "fluxbus-bench-\(scenario)")
        do {
            let started = peers(processes.directory)
            for peer in started {
                let process = try processes.launch(peer.name, executable: settings.executable, arguments: ["bench-peer"] + peer.arguments)
                BenchChildren.shared.add(process.processIdentifier)
            }
            let relayPID = started.first.flatMap { processes.pid($0.name) }
            let progress = ProgressBar.make(scenario)
            let (recorder, elapsed, relayCPU) = try await BaselineBench.measure(
                endpoint: endpoint, count: count, warmup: settings.warmup(for: count), payloadBytes: settings.payloadBytes,
                relayPID: relayPID, progress: progress)
            progress?.finish()
            var report = ScenarioReport(scenario: scenario, operation: operation)
            report.count = count
            report.latency = recorder.summary
            report.throughput = Double(count) / (elapsed.nanoseconds / 1e9)
            // The relay stands where the coordinator stands.
            report.coordinatorCPUSeconds = relayCPU
            report.coordinatorPeakRSSBytes = relayPID.flatMap(ProcessStats.read(pid:))?.peakResidentBytes
            await stop(processes)
            return report
        } catch {
            await stop(processes)
            throw error
        }
    }

    private static func stop(_ processes: LocalProcesses) async {
        let pids = processes.pids.map(\.pid)
        await processes.stop(grace: .seconds(2))
        for pid in pids { BenchChildren.shared.remove(pid) }
        processes.removeDirectory()
    }

    /// Each scenario's median over the median of the floors in its shape that ran beside it.
    static func shapeRatios(_ scenarios: inout [ScenarioReport]) {
        let medians = Dictionary(scenarios.compactMap { report in report.latency.map { (report.scenario, $0.p50) } }) { $1 }
        for index in scenarios.indices {
            guard let median = scenarios[index].latency?.p50, scenarios[index].outcome == .ok else { continue }
            let floors = shapeFloors.filter { $0.of == scenarios[index].scenario }.compactMap { entry in
                medians[entry.floor].flatMap { $0 > 0 ? ScenarioReport.FloorRatio(floor: entry.floor, ratio: median / $0) : nil }
            }
            scenarios[index].ratiosToShapeFloors = floors.isEmpty ? nil : floors
        }
    }
}
