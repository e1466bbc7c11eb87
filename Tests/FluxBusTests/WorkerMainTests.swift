import Flux
import FluxBusProtocol
import FluxStores
import Testing

@testable import FluxBus

/// ``WorkerOptions``, the command line of every worker built on ``WorkerMain``, and the pure part of
/// `BusClient.waitUntilLive`.
@Suite("WorkerMain's options and waitUntilLive's verdicts")
struct WorkerMainTests {
    static let stores: [any Store.Type] = [CountryStore.self, CityStore.self, CounterStore.self]

    @Test func theStandardOptionsParseInBothSpellings() throws {
        let options = try #require(try WorkerOptions.parse(
            ["--id", "w1", "--coordinator=ipc:///tmp/c", "--store", "city", "--store=country", "--data-dir", "/var/lib/w",
             "--checkpoint-ms", "250", "--log-level", "debug", "--log-format=json"],
            environment: [:]))
        #expect(options.id == "w1")
        #expect(options.coordinator == "ipc:///tmp/c")
        #expect(options.stores == ["city", "country"])
        #expect(options.dataDirectory == "/var/lib/w")
        #expect(options.checkpointMillis == 250)
        #expect(options.logLevel == "debug" && options.logFormat == "json")
        #expect(try options.hosted(from: Self.stores).map(\.effectiveName) == ["city", "country"])
    }

    @Test func theCoordinatorDefaultsToTheEnvironmentThenTheStandardEndpoint() throws {
        let fromEnvironment = try WorkerOptions.parse(["--id", "w1"], environment: ["FLUXBUS_COORDINATOR": "tcp://10.0.0.1:7401"])
        #expect(fromEnvironment?.coordinator == "tcp://10.0.0.1:7401")
        let standard = try #require(try WorkerOptions.parse(["--id", "w1"], environment: [:]))
        #expect(standard.coordinator == BusDefaults.controlEndpoint)
        #expect(try standard.hosted(from: Self.stores).map(\.effectiveName) == ["country", "city", "counter"])
        #expect(try standard.security() == nil)
    }

    @Test func helpIsAskedForByEitherSpelling() throws {
        #expect(try WorkerOptions.parse(["--help"], environment: [:]) == nil)
        #expect(try WorkerOptions.parse(["--id", "w1", "-h"], environment: [:]) == nil)
        let help = WorkerHelp.text(program: "todo-worker", stores: Self.stores)
        #expect(help.contains("USAGE: todo-worker --id ID"))
        #expect(help.contains("  city     waits for country"))
        #expect(help.contains("  4  the coordinator refused the worker"))
    }

    @Test(arguments: [
        (["--store", "city"], "give the worker's id: --id ID"),
        (["--id", "w1", "--nope"], "unknown option `--nope`"),
        (["--id"], "--id needs a value"),
        (["--id", "w1", "extra"], "unexpected argument `extra`"),
        (["--id", "w1", "--checkpoint-ms", "0"], "--checkpoint-ms must be a positive number"),
        (["--id", "w1", "--log-level", "loud"], "unknown log level `loud`"),
        (["--id", "w1", "--curve-server-key", "k"], "CURVE needs both"),
        (["--id", "w1", "--store", "cty"], "this worker has no store `cty`; its stores are country, city, counter"),
    ])
    func aMistakeIsAUsageErrorThatSaysWhat(arguments: [String], says: String) {
        do {
            let options = try WorkerOptions.parse(arguments, environment: [:])
            _ = try options?.hosted(from: Self.stores)
            _ = try options?.security()
            Issue.record("\(arguments) parsed")
        } catch let error as BusError {
            #expect(error.code == .usage)
            #expect(error.code.exitCode == 2)
            #expect(error.message.contains(says), "\(error.message)")
        } catch {
            Issue.record("not a BusError: \(error)")
        }
    }

    @Test func exitCodesAreTheCLIs() {
        #expect([BusError.Code.usage, .unreachable, .refused, .storage, .protocolViolation].map(\.exitCode) == [2, 3, 4, 5, 3])
    }

    static func status(workers: [WorkerStatus], waiting: [String: [String]] = [:]) -> Message.Status {
        let stores = waiting.map { name, on in
            StoreStatus(name: name, dependsOn: on, handlesAll: true, handles: [], waitingFor: on, divergedAt: 0, replicas: [])
        }
        return Message.Status(
            requestID: "", epoch: 1, sequence: 0, queueLength: 0, publishEndpoint: "", workers: workers, stores: stores)
    }

    @Test func waitUntilLiveNamesEachWorkerThatIsNotLiveAndItsState() {
        let status = Self.status(workers: [
            WorkerStatus(id: "a", state: .live, stores: ["todo"], lastApplied: 0, heartbeatAgeMillis: 0),
            WorkerStatus(id: "b", state: .catchingUp, stores: ["stats"], lastApplied: 0, heartbeatAgeMillis: 0),
        ])
        #expect(LiveWait.missingWorkers(["a"], in: status) == [])
        #expect(LiveWait.missingWorkers(["a", "b", "c"], in: status) == ["worker `b` (catching-up)", "worker `c` (absent)"])
        #expect(LiveWait.missingStores(["todo"], in: status) == [])
        #expect(LiveWait.missingStores(["todo", "stats"], in: status) == ["store `stats` (no live replica)"])
    }

    @Test func aStoreWaitingForAMissingDependencyIsNotLive() {
        let status = Self.status(
            workers: [WorkerStatus(id: "a", state: .live, stores: ["stats"], lastApplied: 0, heartbeatAgeMillis: 0)],
            waiting: ["stats": ["todo"]])
        #expect(LiveWait.missingStores(["stats"], in: status) == ["store `stats` (waiting for todo)"])
    }
}
