import ArgumentParser
import Foundation
import FluxBus
import FluxBusTools

extension FluxBusCommand {
    struct Bench: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Measure FluxBus, in process and on a cluster, against floors measured in the same run.",
            discussion: """
                Like redis-benchmark or `nats bench`: by default it starts a coordinator and worker processes on this \
                machine from its own executable (tcp on 127.0.0.1, free ports) and stops them afterwards, also on \
                Ctrl-C. Every distributed scenario is printed as absolute figures and as a ratio to a raw ZeroMQ \
                round trip (client -> relay -> echo -> relay -> client, three processes) measured in the same run; \
                flight and status-rtt also as a ratio to raw ZeroMQ in their own shape (flight-floor, \
                flight-floor-unsynced, status-floor: the same processes and messages, and the syncs --sync always \
                makes, with no bus in between). `--list` shows the scenarios; without a name, all but memory, \
                large-state and snapshot-join run. A scenario may also be workers-N for any N up to 64.

                Against an existing cluster (--control): the workers must already be there, hosting `counter` \
                (kind counter) for workers-N, memory and catch-up, and country, city and price for flight. \
                workers-N then measures whatever replicas are live; durable-* need a coordinator started here; \
                pass --coordinator-pid for the coordinator's CPU and memory figures. The baseline and the floors \
                still run here.

                Build in release mode for meaningful figures (see docs/BENCHMARKS.md).

                Examples:
                  swift build -c release --product fluxbus && .build/release/fluxbus bench
                  fluxbus bench workers-1 workers-3 workers-8 --json > bench.json
                  fluxbus bench --quick --json workers-1
                  fluxbus bench memory --count 1000000
                  fluxbus bench workers-1 --control tcp://10.0.0.5:7401 --coordinator-pid 4242
                """
        )

        @Argument(help: "Scenarios to run (see --list); all but memory when omitted.")
        var scenarios: [String] = []

        @Flag(help: "List the scenarios and exit.")
        var list = false

        @Option(help: "Measured operations per scenario (defaults: 10,000 dispatches; catch-up 100,000; memory 1,000,000; in process 1,000,000 per round).")
        var count: Int?

        @Option(help: ArgumentHelp("The same as --count (the in-process scenarios' older name).", visibility: .hidden))
        var operations: Int?

        @Option(help: "Rounds of the in-process scenarios; the median round is reported (default 7, 3 with --quick).")
        var rounds: Int?

        @Option(help: "Unrecorded operations before measuring (default: 10% of the count, at most 1,000).")
        var warmup: Int?

        @Option(help: "Bytes in each action's payload and in the baseline's message.")
        var payloadBytes = 64

        @Option(help: "Entries in the kv store of large-state and snapshot-join (default 1,000,000; with --quick 2,000 and 30,000).")
        var stateEntries: Int?

        @Option(help: "Worker processes for memory, catch-up (already live ones) and durable-*; workers-N names its own.")
        var workers: Int?

        @Option(help: ArgumentHelp("Run against this existing coordinator instead of starting one.", valueName: "endpoint"))
        var control: String?

        @Option(help: ArgumentHelp(
            "The existing cluster's publish endpoint; recorded in the report (workers learn it from WELCOME).", valueName: "endpoint"))
        var publish: String?

        @Option(help: "The existing coordinator's process id on this machine, for its CPU and memory figures.")
        var coordinatorPid: Int32?

        @Flag(help: "A tiny smoke run: 200 dispatches, 2,000 for catch-up and memory.")
        var quick = false

        @Flag(help: "Skip the pipelined half of the dispatch scenarios: every dispatch is lock-step (for strace -c).")
        var lockStepOnly = false

        @Flag(help: "Print one JSON document (machine, settings, every scenario) instead of a table.")
        var json = false

        func validate() throws {
            for name in scenarios where !BenchRunner.isScenario(name) {
                throw ValidationError(
                    "unknown scenario '\(name)'; choose from: \(BenchRunner.catalogue.map(\.name).joined(separator: ", ")) (or workers-N)")
            }
            if let count = count ?? operations, count <= 0 { throw ValidationError("--count must be positive") }
            if let rounds, rounds <= 0 { throw ValidationError("--rounds must be positive") }
            if let warmup, warmup < 0 { throw ValidationError("--warmup must not be negative") }
            if let workers, !(1...64).contains(workers) { throw ValidationError("--workers must be between 1 and 64") }
            if let stateEntries, stateEntries < 1_000 { throw ValidationError("--state-entries must be at least 1000") }
            guard (0...1_000_000).contains(payloadBytes) else { throw ValidationError("--payload-bytes must be between 0 and 1000000") }
        }

        func run() async throws {
            if list {
                for (name, summary) in BenchRunner.catalogue { print(name.padding(toLength: BenchReport.nameWidth, withPad: " ", startingAt: 0) + summary) }
                return
            }
            let signalSources = BenchChildren.shared.installSignalHandlers()
            defer { withExtendedLifetime(signalSources) {} }
            var settings = BenchSettings(executable: URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath())
            settings.count = count ?? operations
            settings.rounds = rounds
            settings.warmup = warmup
            settings.payloadBytes = payloadBytes
            settings.workers = workers
            settings.stateEntries = stateEntries
            settings.quick = quick
            settings.lockStepOnly = lockStepOnly
            settings.control = control
            settings.coordinatorPID = coordinatorPid
            var report = await BenchRunner.run(
                scenarios.isEmpty ? BenchRunner.defaultSet : scenarios, settings: settings,
                command: (["fluxbus"] + CommandLine.arguments.dropFirst()).joined(separator: " "))
            if let publish, control != nil { report.cluster += " (publish \(publish))" }
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
                print(String(decoding: try encoder.encode(report), as: UTF8.self))
            } else {
                print(report.text)
            }
            let failed = ([report.baseline, report.baselineEnd].compactMap { $0 } + report.scenarios).filter { $0.outcome == .failed }
            if !failed.isEmpty {
                printError("failed: " + failed.map { "\($0.scenario): \($0.message ?? "")" }.joined(separator: "\n        "))
                throw ExitCode(3)
            }
        }
    }

    /// The raw ZeroMQ peers of the baseline and of the floors in a scenario's shape (`BaselineBench`, `ShapeFloors`).
    /// Hidden; `fluxbus bench` starts and stops them.
    struct BenchPeer: AsyncParsableCommand {
        static let roles = ["relay", "echo", "flight-relay", "stage", "reflect", "client"]

        static let configuration = CommandConfiguration(
            commandName: "bench-peer",
            abstract: "A raw ZeroMQ peer for the benchmark's floors (started by `fluxbus bench`).",
            discussion: """
                relay binds a ROUTER and forwards between clients and the echo peer; echo connects a DEALER and \
                sends every message back (the baseline). flight-relay binds a ROUTER and a PUB (--publish) and passes \
                each client message along three stage peers, syncing a page of --sync-file where a --sync always \
                coordinator syncs its log; stage connects a SUB and a DEALER as stage --stage N (flight-floor). \
                reflect binds a ROUTER and sends every message back to its sender (status-floor). All run until killed, \
                but client: it measures --count lock-step round trips through the relay at --endpoint, as the benchmark \
                does, prints their median and exits.

                Example:
                  fluxbus bench-peer relay --endpoint tcp://127.0.0.1:7500
                """,
            shouldDisplay: false)

        @Argument(help: "relay, echo, flight-relay, stage, reflect or client.")
        var role: String

        @Option(help: "The relay's ROUTER endpoint.")
        var endpoint: String

        @Option(help: "flight-relay and stage: the relay's PUB endpoint.")
        var publish: String?

        @Option(help: "stage: which stage this is, 1 to 3.")
        var stage: Int?

        @Option(help: "flight-relay: the file whose pages it syncs; without it, it syncs nothing.")
        var syncFile: String?

        @Option(help: "client: the round trips to measure, after a warm-up of a tenth of them.")
        var count = 10_000

        func validate() throws {
            guard Self.roles.contains(role) else {
                throw ValidationError("the role must be one of \(Self.roles.joined(separator: ", ")), not '\(role)'")
            }
            if ["flight-relay", "stage"].contains(role), publish == nil { throw ValidationError("\(role) needs --publish ENDPOINT") }
            if role == "stage", !(1...3).contains(stage ?? 0) { throw ValidationError("stage needs --stage 1, 2 or 3") }
            if role == "client", count < 1 { throw ValidationError("--count must be at least 1, not \(count)") }
        }

        func run() async throws {
            if role == "client" {
                var settings = BenchSettings(executable: URL(fileURLWithPath: CommandLine.arguments[0]))
                settings.count = count
                let latency = try await ShapeFloors.runClient(endpoint: endpoint, settings: settings)
                print(String(format: "%d round trips: p50 %.1f µs, p90 %.1f µs, p99 %.1f µs", latency.count, latency.p50, latency.p90, latency.p99))
                return
            }
            // Blocking ZeroMQ calls stay off Swift's cooperative pool: the peer loops on a thread of its own.
            let (role, endpoint, publish, stage, syncFile) = (role, endpoint, publish ?? "", stage ?? 1, syncFile)
            let thread = Thread {
                do {
                    switch role {
                    case "relay": try BaselineBench.runRelay(endpoint: endpoint)
                    case "echo": try BaselineBench.runEcho(endpoint: endpoint)
                    case "flight-relay": try ShapeFloors.runFlightRelay(control: endpoint, publish: publish, syncPath: syncFile)
                    case "stage": try ShapeFloors.runStage(stage, control: endpoint, publish: publish)
                    default: try ShapeFloors.runReflector(endpoint: endpoint)
                    }
                } catch {
                    printError("bench-peer \(role): \(error)")
                    Foundation.exit(3)
                }
            }
            thread.start()
            while true { try await Task.sleep(for: .seconds(3600)) }
        }
    }
}
