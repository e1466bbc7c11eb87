import Foundation

extension BenchReport {
    /// The width of the table's first column: the longest scenario name in the catalogue, and a space.
    public static let nameWidth = (BenchRunner.catalogue.map(\.name.count).max() ?? 14) + 1

    /// The human-readable table: absolute figures, the ratio to the baseline, the coordinator's CPU and memory, and
    /// every target with met or MISSED.
    public var text: String {
        var lines: [String] = []
        lines.append("fluxbus bench: \(machine.cores) cores, \(machine.cpuModel), \(machine.date); cluster: \(cluster); payload \(payloadBytes) bytes")
        lines.append("")
        let header = "scenario".padded(Self.nameWidth) + "   count" + "      p50 µs" + "    p90 µs" + "    p99 µs" + "  p99.9 µs" + "      ops/s"
            + "  x base" + "  coord CPU s" + "  coord peak MB"
        lines.append(header)
        for scenario in [baseline, baselineEnd].compactMap({ $0 }) + scenarios {
            lines.append(scenario.row)
        }
        if let baselineMedian {
            lines.append(String(format: "x base: the median over %.1f µs, the faster of the baseline's medians before and after the scenarios", baselineMedian))
        }
        lines.append("")
        for scenario in [baseline, baselineEnd].compactMap({ $0 }) + scenarios {
            var notes: [String] = []
            if let inProcess = scenario.inProcess {
                notes.append(String(format: "%.1f ns per op, floor %.1f ns, %.2fx", inProcess.nanosPerOperation,
                                    inProcess.floorNanosPerOperation, inProcess.ratio))
            }
            for target in scenario.targets {
                notes.append("target \(target.metric) \(target.comparison) \(target.threshold.compact): \(target.value.compact) "
                    + (target.met ? "met" : "MISSED"))
            }
            for floor in scenario.ratiosToShapeFloors ?? [] {
                notes.append(String(format: "%.2fx the median of ", floor.ratio) + "\(floor.floor), the same shape over raw ZeroMQ")
            }
            if let rate = scenario.pipelinedThroughput {
                notes.append(String(format: "%.0f dispatches/s with %d outstanding (the table's ops/s is lock-step)", rate, scenario.pipelineWindow ?? 0))
            }
            if let samples = scenario.rssSamples {
                notes.append("VmRSS MB at each 10%: " + samples.map { String(format: "%.1f", Double($0) / 1_048_576) }.joined(separator: " "))
            }
            if let stolen = scenario.stolenCPUSeconds, let wall = scenario.wallSeconds, wall > 0 {
                let share = stolen / (wall * Double(machine.cores))
                if share > 0.05 {
                    notes.append(String(format: "the hypervisor took %.1f CPU-seconds (%.0f%% of this machine's) while it ran: "
                        + "its figures are not comparable with a quiet run's", stolen, 100 * share))
                }
            }
            if let message = scenario.message { notes.append(message) }
            if !scenario.operation.isEmpty { notes.append(scenario.operation) }
            guard !notes.isEmpty else { continue }
            lines.append("\(scenario.scenario):")
            lines += notes.map { "  \($0)" }
        }
        return lines.joined(separator: "\n")
    }
}

extension ScenarioReport {
    var row: String {
        let name = scenario.padded(BenchReport.nameWidth)
        guard outcome == .ok else { return name + "   " + (outcome == .unavailable ? "unavailable" : "FAILED") }
        func cell(_ value: Double?, _ width: Int, _ format: String) -> String {
            (value.map { String(format: format, $0) } ?? "-").leftPadded(width)
        }
        return name + cell(count.map(Double.init), 8, "%.0f") + cell(latency?.p50, 12, "%.1f") + cell(latency?.p90, 10, "%.1f")
            + cell(latency?.p99, 10, "%.1f") + cell(latency?.p999, 11, "%.1f") + cell(throughput, 11, "%.0f")
            + cell(ratioToBaseline, 8, "%.2f") + cell(coordinatorCPUSeconds, 13, "%.2f")
            + cell(coordinatorPeakRSSBytes.map { Double($0) / 1_048_576 }, 15, "%.1f")
    }
}

extension String {
    func padded(_ width: Int) -> String { count >= width ? self : padding(toLength: width, withPad: " ", startingAt: 0) }
    func leftPadded(_ width: Int) -> String { count >= width ? " " + self : String(repeating: " ", count: width - count) + self }
}

extension Double {
    /// 2, 1.5, 10000, 0.37: no trailing zeros, at most two decimals.
    var compact: String {
        self == rounded() && abs(self) < 1e15 ? String(format: "%.0f", self) : String(format: "%.2f", self)
    }
}
