import FluxBusProtocol

/// How `fluxbus dispatch --trace` shows where a dispatch's time went: one line per step, with its start, end and
/// duration in µs from the coordinator's receipt of the request, and a bar on a common scale.
public enum WaterfallView {
    /// One step, as `dispatch --trace --json` prints it under `trace`.
    public struct Step: Codable, Sendable, Hashable {
        public let process: String
        public let step: String
        public let startMicros: UInt64
        public let endMicros: UInt64

        public init(_ step: TraceStep) {
            process = step.process
            self.step = step.step
            startMicros = step.startMicros
            endMicros = step.endMicros
        }
    }

    /// What is measured where, printed under every waterfall.
    public static let legend = """
        Times are µs from the coordinator's receipt of the DISPATCH, on the coordinator's clock. A worker's steps are \
        measured on its own clock from its receipt of the ACTION (and of each RELEASE) and placed between the \
        coordinator's send and its receipt of the ACK; clocks of different processes are never subtracted. `network` \
        is the time left over (transit and queueing), split evenly between the way out and the way back.
        """

    public static func text(_ steps: [TraceStep], traceparent: String, barWidth: Int = 32) -> String {
        let total = max(1, steps.map(\.endMicros).max() ?? 1)
        let processWidth = max(11, steps.map(\.process.count).max() ?? 0)
        var lines = [
            "trace \(traceparent): \(total) µs",
            pad("start", 8, left: true) + pad("end", 8, left: true) + pad("took", 8, left: true) + "  "
                + pad("process", processWidth) + "  " + pad("", barWidth + 2) + "  step",
        ]
        for step in steps {
            let from = min(barWidth - 1, Int(step.startMicros * UInt64(barWidth) / total))
            let to = max(from + 1, Int((step.endMicros * UInt64(barWidth) + total - 1) / total))
            let bar = String(repeating: " ", count: from) + String(repeating: step.process == "network" ? "-" : "#", count: min(to, barWidth) - from)
            lines.append(
                pad("\(step.startMicros)", 8, left: true) + pad("\(step.endMicros)", 8, left: true)
                    + pad("\(step.endMicros - step.startMicros)", 8, left: true) + "  " + pad(step.process, processWidth) + "  |"
                    + pad(bar, barWidth) + "|  " + step.step)
        }
        return (lines + [legend]).joined(separator: "\n")
    }

    private static func pad(_ text: String, _ width: Int, left: Bool = false) -> String {
        let fill = String(repeating: " ", count: max(0, width - text.count))
        return left ? fill + text : text + fill
    }
}
