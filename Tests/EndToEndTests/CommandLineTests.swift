import Foundation
import FluxBus
import FluxBusProtocol
import FluxBusTools
import Testing

/// The `fluxbus` binary's contract with scripts and operators: exit codes, `--json` shapes, and help that teaches.
@Suite("fluxbus command line", .timeLimit(.minutes(1)))
struct CommandLineTests {
    struct Run {
        let status: Int32
        let output: String
        let error: String
    }

    /// Runs the binary to completion.
    static func fluxbus(_ arguments: [String], environment: [String: String] = [:], input: URL? = nil) throws -> Run {
        let process = Process()
        if let input { process.standardInput = try FileHandle(forReadingFrom: input) }
        process.executableURL = Cluster.binary
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        try process.run()
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        let errorData = error.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Run(
            status: process.terminationStatus, output: String(decoding: outputData, as: UTF8.self),
            error: String(decoding: errorData, as: UTF8.self))
    }

    @Test func helpListsEverySubcommandAndTheExitCodes() throws {
        let help = try Self.fluxbus(["--help"])
        #expect(help.status == 0)
        for subcommand in ["coordinator", "worker", "dispatch", "status", "graph", "state", "watch", "tail", "top", "demo", "bench", "keygen"] {
            #expect(help.output.contains(subcommand))
        }
        for code in ["0  done", "1  the dispatch completed", "2  usage", "3  unreachable", "4  refused"] {
            #expect(help.output.contains(code), "exit code line '\(code)' missing from --help")
        }
    }

    @Test(arguments: ["coordinator", "worker", "dispatch", "status", "graph", "state", "watch", "tail", "demo", "bench", "keygen"])
    func everySubcommandHasAnAbstractAndAnExample(subcommand: String) throws {
        let help = try Self.fluxbus([subcommand, "--help"])
        #expect(help.status == 0)
        #expect(help.output.contains("OVERVIEW:"))
        #expect(help.output.contains("Example"), "`fluxbus \(subcommand) --help` shows no example")
    }

    @Test func usageErrorsExitTwoAndSayWhatToDo() throws {
        let badJSON = try Self.fluxbus(["dispatch", "counter.add", "{by:1}"])
        #expect(badJSON.status == 2)
        #expect(badJSON.error.contains("not valid JSON"))
        let badSpec = try Self.fluxbus(["worker", "--id", "w", "--store", "x=nosuchkind"])
        #expect(badSpec.status == 2)
        #expect(badSpec.error.contains("unknown kind 'nosuchkind'"))
        #expect(try Self.fluxbus(["no-such-command"]).status == 2)
        // An empty request id would make every retry under it a new request (a probe applied one twice that way).
        let emptyID = try Self.fluxbus(["dispatch", "counter.add", #"{"by":1}"#, "--request-id", ""])
        #expect(emptyID.status == 2 && emptyID.error.contains("--request-id must not be empty"), "\(emptyID)")
        // A config file named on purpose that is not there is not silently replaced by the defaults.
        let missing = try Self.fluxbus(["status", "--timeout", "0.3"], environment: ["FLUXBUS_CONFIG": "/nonexistent/fluxbus.json"])
        #expect(missing.status == 2 && missing.error.contains("FLUXBUS_CONFIG names /nonexistent/fluxbus.json"), "\(missing)")
    }

    /// No answer says nothing of a dispatch's outcome: the error says so and names the request id to retry under, or
    /// a user sends it again under a new id and applies it twice.
    @Test func aDispatchWithoutAnAnswerNamesItsRequestID() throws {
        let cluster = try Cluster()
        let run = try Self.fluxbus([
            "dispatch", "counter.add", #"{"by":1}"#, "--request-id", "r-unanswered", "--coordinator", cluster.control,
            "--timeout", "0.3",
        ])
        #expect(run.status == 3, "\(run)")
        #expect(run.error.contains("may have been applied") && run.error.contains("--request-id r-unanswered"), "\(run)")
    }

    @Test func anUnreachableCoordinatorExitsThree() throws {
        let cluster = try Cluster()
        let run = try Self.fluxbus(["status", "--coordinator", cluster.control, "--timeout", "0.3"])
        #expect(run.status == 3)
        #expect(run.error.contains("no answer from the coordinator"))
        let fromEnvironment = try Self.fluxbus(["status", "--timeout", "0.3"], environment: ["FLUXBUS_COORDINATOR": cluster.control])
        #expect(fromEnvironment.status == 3)
        #expect(fromEnvironment.error.contains(cluster.control), "FLUXBUS_COORDINATOR was not used")
    }

    @Test func dispatchStatusGraphAndStateAgainstALiveBus() async throws {
        let cluster = try Cluster()
        try cluster.startCoordinator()
        try cluster.startWorker("w1", stores: ["country=country"])
        try cluster.startWorker("w2", stores: ["city=city", "price=price"])
        let client = try await cluster.client()
        try await cluster.waitUntilLive(2, client: client)
        await client.close()
        let endpoint = ["--coordinator", cluster.control]

        let ok = try Self.fluxbus(["dispatch", "country-update", #"{"country":"Japan"}"#, "--json"] + endpoint)
        #expect(ok.status == 0)
        let result = try JSONDecoder().decode(ResultView.JSON.self, from: Data(ok.output.utf8))
        #expect(result.status == "ok")
        #expect(result.stores.keys.sorted() == ["city", "country", "price"])
        #expect(result.stores["price"]?.replicas == 1)
        #expect(result.elapsedMicros > 0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(ok.output.utf8)) as? [String: Any])
        for key in ["seq", "status", "stores", "elapsedMicros"] { #expect(object[key] != nil, "dispatch --json lacks \(key)") }

        let failed = try Self.fluxbus(["dispatch", "country-update", #"{"country":"Atlantis"}"#] + endpoint)
        #expect(failed.status == 1)
        #expect(failed.output.contains("city      failed"))
        #expect(failed.output.contains("waits for `city`, which failed"))

        let fromFile = cluster.directory.appendingPathComponent("payload.json")
        try Data(#"{"city":"Kyoto"}"#.utf8).write(to: fromFile)
        #expect(try Self.fluxbus(["dispatch", "city-update", "@\(fromFile.path)"] + endpoint).status == 0)

        let state = try Self.fluxbus(["state", "price"] + endpoint)
        #expect(state.status == 0)
        #expect(state.output.contains(#""city":"Kyoto""#))
        #expect(try Self.fluxbus(["state", "nosuchstore"] + endpoint).status == 4)

        let status = try Self.fluxbus(["status", "--json"] + endpoint)
        #expect(status.status == 0)
        let view = try JSONDecoder().decode(StatusView.JSON.self, from: Data(status.output.utf8))
        #expect(view.seq == 3)
        #expect(Set(view.workers.map(\.id)) == ["w1", "w2"])
        #expect(view.workers.allSatisfy { $0.state == "live" })
        #expect(view.stores.first { $0.name == "price" }?.dependsOn == ["city"])
        let text = try Self.fluxbus(["status"] + endpoint)
        #expect(text.output.contains("w2") && text.output.contains("live"))

        let dot = try Self.fluxbus(["graph", "--format", "dot"] + endpoint)
        #expect(dot.output.contains(#""price" -> "city""#))
        let graph = try JSONDecoder().decode([GraphView.JSON].self, from: Data(try Self.fluxbus(["graph", "--format", "json"] + endpoint).output.utf8))
        #expect(graph.map(\.name) == ["country", "city", "price"])

        let statuses = await cluster.stop()
        #expect(statuses.values.allSatisfy { $0 == 0 }, "\(statuses)")
    }

    @Test func aWorkerThatWouldCloseACycleIsRefusedWithItsReason() async throws {
        let cluster = try Cluster()
        try cluster.startCoordinator()
        try cluster.startWorker("w1", stores: ["a=kv,after=b"])
        let client = try await cluster.client()
        try await cluster.waitUntilLive(1, client: client)
        let refused = try cluster.startWorker("w2", stores: ["b=kv,after=a"])
        refused.waitUntilExit()
        #expect(refused.terminationStatus == 4)
        #expect(cluster.log("w2").contains("cycle"))
        let graph = try await client.graph()
        #expect(graph.stores.map(\.name) == ["a"])
        await client.close()
        await cluster.stop()
    }

    @Test func theDemoRunsTheFlightExampleAcrossProcessesAndStopsCleanly() throws {
        let demo = try Self.fluxbus(["demo"])
        #expect(demo.status == 0, "\(demo.output)\n\(demo.error)")
        #expect(demo.output.contains("price    skipped  on price-worker: waits for `city`, which failed"))
        #expect(demo.output.contains(#"price    {"city":"Osaka","country":"Japan","price":581}"#))
        #expect(demo.output.contains("stopped with SIGTERM: coordinator exit 0, workers exit 0, 0, 0"))
    }
}
