import Foundation
import FluxBus
import FluxBusTools
import Testing

/// `fluxbus bench` end to end: a tiny run of the distributed harness, its JSON, and that it leaves no process behind.
/// Speed itself is measured by `fluxbus bench`, not here.
@Suite("fluxbus bench", .timeLimit(.minutes(1)))
struct BenchSmokeTests {
    /// The processes still running whose environment carries `marker`: children inherit the bench's environment.
    static func processes(marked marker: String) -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap(Int32.init).filter { pid in
            guard let environment = FileManager.default.contents(atPath: "/proc/\(pid)/environ") else { return false }
            return environment.split(separator: 0).contains { String(decoding: $0, as: UTF8.self) == marker }
        }
    }

    @Test func aQuickRunReportsPositiveFiguresAndLeavesNoProcess() throws {
        let marker = "FLUXBUS_BENCH_SMOKE=\(UUID().uuidString)"
        let (key, value) = (String(marker.prefix { $0 != "=" }), String(marker.drop { $0 != "=" }.dropFirst()))
        let run = try CommandLineTests.fluxbus(
            ["bench", "--quick", "--json", "workers-1", "batch"], environment: [key: value])
        #expect(run.status == 0, "\(run.error)")
        #expect(Self.processes(marked: marker).isEmpty, "fluxbus bench left processes behind")

        let report = try JSONDecoder().decode(BenchReport.self, from: Data(run.output.utf8))
        #expect(report.machine.cores > 0)
        #expect(!report.machine.cpuModel.isEmpty)
        let baseline = try #require(report.baseline)
        #expect(baseline.outcome == .ok)
        #expect((baseline.latency?.p50 ?? 0) > 0)
        // The floor is measured again after the scenarios; ratios divide by the faster of the two medians.
        let baselineEnd = try #require(report.baselineEnd)
        #expect((baselineEnd.latency?.p50 ?? 0) > 0)
        let floor = try #require(report.baselineMedian)
        #expect(floor == min(baseline.latency!.p50, baselineEnd.latency!.p50))

        let workers = try #require(report.scenarios.first { $0.scenario == "workers-1" })
        #expect(workers.outcome == .ok, "\(workers.message ?? "")")
        let latency = try #require(workers.latency)
        #expect(latency.count == 200)
        for percentile in [latency.p50, latency.p90, latency.p99, latency.p999] { #expect(percentile > 0) }
        #expect(latency.p50 <= latency.p99)
        #expect((workers.throughput ?? 0) > 0)
        #expect(abs((workers.ratioToBaseline ?? 0) - latency.p50 / floor) < 1e-9)
        #expect((workers.coordinatorCPUSeconds ?? -1) >= 0)
        // Linux counts the CPU time a hypervisor takes (0 on bare metal), and every scenario says how much it took.
        #expect((workers.wallSeconds ?? 0) > 0 && (workers.stolenCPUSeconds ?? -1) >= 0)
        #expect((workers.coordinatorPeakRSSBytes ?? 0) > 0)
        #expect(workers.targets.contains { $0.metric == "median / baseline median" && $0.threshold == 2 })

        // Batched dispatch: every action counted, a latency per batch, and its target judged.
        let batch = try #require(report.scenarios.first { $0.scenario == "batch" })
        #expect(batch.outcome == .ok, "\(batch.message ?? "")")
        #expect(batch.count == 2_000 && batch.latency?.count == 20)
        #expect((batch.throughput ?? 0) > 0)
        #expect(batch.targets.contains { $0.metric == "actions per second" && $0.threshold == 200_000 })
    }

    @Test func theFloorsInAScenariosShapeRunBesideItAndDivideItsMedian() throws {
        let run = try CommandLineTests.fluxbus(
            ["bench", "--quick", "--json", "status-floor", "flight-floor", "flight", "status-rtt", "flight-floor-unsynced"])
        #expect(run.status == 0, "\(run.error)")
        let report = try JSONDecoder().decode(BenchReport.self, from: Data(run.output.utf8))
        // In the catalogue's order, each floor after its scenario, whatever the order asked.
        #expect(report.scenarios.map(\.scenario) == ["flight", "flight-floor", "flight-floor-unsynced", "status-rtt", "status-floor"])
        var medians: [String: Double] = [:]
        for scenario in report.scenarios {
            #expect(scenario.outcome == .ok, "\(scenario.scenario): \(scenario.message ?? "")")
            medians[scenario.scenario] = try #require(scenario.latency?.p50)
            #expect(scenario.latency?.count == 200)
        }
        for floor in ["flight-floor", "flight-floor-unsynced", "status-floor"] {
            let entry = try #require(report.scenarios.first { $0.scenario == floor })
            #expect(entry.targets.isEmpty && entry.ratiosToShapeFloors == nil)
            #expect((entry.ratioToBaseline ?? 0) > 0)
        }
        let flight = try #require(report.scenarios.first { $0.scenario == "flight" }?.ratiosToShapeFloors)
        #expect(flight.map(\.floor) == ["flight-floor", "flight-floor-unsynced"])
        #expect(abs(flight[0].ratio - medians["flight"]! / medians["flight-floor"]!) < 1e-9)
        #expect(abs(flight[1].ratio - medians["flight"]! / medians["flight-floor-unsynced"]!) < 1e-9)
        let status = try #require(report.scenarios.first { $0.scenario == "status-rtt" }?.ratiosToShapeFloors)
        #expect(status.count == 1 && abs(status[0].ratio - medians["status-rtt"]! / medians["status-floor"]!) < 1e-9)
    }

    @Test func theListNamesEveryScenarioInFullBeforeItsSummary() throws {
        let run = try CommandLineTests.fluxbus(["bench", "--list"])
        #expect(run.status == 0, "\(run.error)")
        let lines = run.output.split(separator: "\n").map(String.init)
        #expect(lines.count == BenchRunner.catalogue.count)
        for (line, (name, summary)) in zip(lines, BenchRunner.catalogue) {
            // A name as long as `flight-floor-unsynced` once ran into its summary.
            #expect(line.hasPrefix(name + " ") && line.hasSuffix(summary), "\(line)")
            #expect(line.dropFirst(name.count).trimmingCharacters(in: .whitespaces) == summary)
        }
    }

    @Test func anInterruptedRunStopsItsProcesses() async throws {
        let marker = "FLUXBUS_BENCH_SMOKE=\(UUID().uuidString)"
        let (key, value) = (String(marker.prefix { $0 != "=" }), String(marker.drop { $0 != "=" }.dropFirst()))
        let process = Process()
        process.executableURL = Cluster.binary
        process.arguments = ["bench", "workers-3", "--count", "1000000"]
        process.environment = ProcessInfo.processInfo.environment.merging([key: value]) { $1 }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Wait until the baseline's relay and echo processes are up (the bench itself plus 2 children), then Ctrl-C.
        let deadline = ContinuousClock.now.advanced(by: .seconds(20))
        while Self.processes(marked: marker).count < 3, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(Self.processes(marked: marker).count >= 3)
        try await Task.sleep(for: .milliseconds(300))
        kill(process.processIdentifier, SIGINT)
        process.waitUntilExit()
        #expect(process.terminationStatus == 128 + SIGINT)
        #expect(Self.processes(marked: marker).isEmpty, "an interrupted fluxbus bench left processes behind")
    }
}
