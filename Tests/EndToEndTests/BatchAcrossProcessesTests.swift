import Flux
import Foundation
import FluxBus
import FluxBusProtocol
import FluxBusTools
import FluxStores
import GRDB
import Testing

/// `fluxbus dispatch --batch` against stores spread over worker processes, and against a coordinator SIGKILLed in the
/// middle of a batch. Each line of standard input is one action with its own sequence.
@Suite("Batches across processes", .timeLimit(.minutes(1)))
struct BatchAcrossProcessesTests {
    struct BatchLine: Decodable {
        struct Failure: Decodable, Equatable {
            let seq: UInt64
            let store: String
            let status: String
            let message: String
        }
        let firstSeq: UInt64
        let count: UInt32
        let failures: [Failure]
    }

    static func batchLines(_ output: String) throws -> [BatchLine] {
        try output.split(separator: "\n").map { try JSONDecoder().decode(BatchLine.self, from: Data($0.utf8)) }
    }

    static func write(_ lines: [String], to url: URL) throws {
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: url)
    }

    static func journal(_ cluster: Cluster, _ name: String) -> URL {
        cluster.directory.appendingPathComponent("\(name).journal")
    }

    /// The flight chain on three processes (country and a kv replica on w1, city and another kv replica on w2, price
    /// on w3): a batch of country updates, one to a country without a default city, then a batch of kv.set. The
    /// per-action failures are exactly the bad country's, every store applied every sequence once, in order and in
    /// the chain's order, and the kv replicas hold the same map.
    @Test func aBatchRunsEachActionAcrossThreeWorkerProcesses() async throws {
        let cluster = try Cluster()
        try cluster.startCoordinator()
        try cluster.startWorker("w1", stores: ["country=country", "kv=kv"], extra: ["--journal", Self.journal(cluster, "w1").path])
        try cluster.startWorker("w2", stores: ["city=city", "kv=kv"], extra: ["--journal", Self.journal(cluster, "w2").path])
        try cluster.startWorker("w3", stores: ["price=price"], extra: ["--journal", Self.journal(cluster, "w3").path])
        let client = try await cluster.client()
        try await cluster.waitUntilLive(3, client: client)

        let countries = Flight.defaultCities.keys.sorted()
        var lines = (0..<300).map { #"{"country":"\#(countries[$0 % countries.count])"}"# }
        lines[150] = #"{"country":"Atlantis"}"#
        let input = cluster.directory.appendingPathComponent("countries.jsonl")
        try Self.write(lines, to: input)
        let flights = try await cluster.run("flights", [
            "dispatch", "country-update", "--batch", "--batch-size", "128", "--json", "--coordinator", cluster.control,
        ], input: input)
        #expect(flights.status == 1, "one action had a store fail: \(flights)")
        let flightBatches = try Self.batchLines(flights.output)
        #expect(flightBatches.map(\.firstSeq) == [1, 129, 257] && flightBatches.map(\.count) == [128, 128, 44], "\(flights)")
        #expect(flightBatches.flatMap(\.failures) == [
            .init(seq: 151, store: "city", status: "failed", message: "no default city for country `Atlantis`"),
            .init(seq: 151, store: "price", status: "skipped", message: "waits for `city`, which failed"),
        ], "\(flights)")
        let last = countries[299 % countries.count]
        let price = try JSONDecoder().decode(PriceStore.State.self, from: Data(try await client.state(of: "price").state))
        #expect(price == .init(country: last, city: Flight.defaultCities[last], price: Flight.price(country: last, city: Flight.defaultCities[last]!)))

        try Self.write((1...500).map(KVHistory.payload), to: input)
        let sets = try await cluster.run("sets", [
            "dispatch", "kv.set", "--batch", "--batch-size", "200", "--json", "--coordinator", cluster.control,
        ], input: input)
        #expect(sets.status == 0, "\(sets)")
        let setBatches = try Self.batchLines(sets.output)
        #expect(setBatches.map(\.firstSeq) == [301, 501, 701] && setBatches.allSatisfy(\.failures.isEmpty), "\(sets)")
        var expected: [String: JSONValue] = [:]
        for index in 1...500 { expected[KVHistory.key(index)] = .number(JSONNumber(index)) }
        let result = try await client.dispatch("kv.set", json: #"{"key":"probe","value":0}"#)
        expected["probe"] = .number(0)
        let digest = KVState(expected).stateDigest
        #expect(result.sequence == 801 && result.outcomes.count == 2 && result.outcomes.allSatisfy { $0.status == .ok && $0.digest == digest },
                "#\(result.sequence): \(result.outcomes)")
        await client.close()
        let statuses = await cluster.stop()
        #expect(statuses.values.allSatisfy { $0 == 0 }, "\(statuses)")

        // Each store's journal: the sequences it took part in, once each, in order; and for each country update the
        // chain ran country, then city, then price (w3 skipped price for #151, and journaled that).
        var byStore: [String: [JournalEntry]] = [:]
        for worker in ["w1", "w2", "w3"] {
            let entries = try JournalEntry.read(Self.journal(cluster, worker))
            let kv = entries.filter { $0.store == "kv" }.map(\.sequence)
            #expect(worker == "w3" ? kv.isEmpty : kv == Array(301...801), "kv on \(worker): \(KVHistory.describe(kv))")
            for entry in entries where entry.store != "kv" { byStore[entry.store, default: []].append(entry) }
        }
        for store in ["country", "city", "price"] {
            let sequences = byStore[store]?.map(\.sequence) ?? []
            #expect(sequences == Array(1...300), "\(store): \(KVHistory.describe(sequences))")
        }
        #expect(byStore["price"]?.first { $0.sequence == 151 }?.status == "skipped")
        for sequence in UInt64(1)...300 {
            let order = ["country", "city", "price"].map { store in byStore[store]!.first { $0.sequence == sequence }!.nanos }
            #expect(order == order.sorted(), "#\(sequence) did not run country, city, price in that order")
        }
    }

    /// `fluxbus dispatch --batch --request-id import` of 3,000 kv.set in batches of 250, and the coordinator
    /// SIGKILLed in the middle, with a batch surely in flight: three batches completed by a first run over the input's
    /// head, then both replicas SIGSTOPped while the whole import runs, until the log holds an action beyond the last
    /// completed one. The client gives up (exit 3). Restarted on the same data directory, the
    /// coordinator dispatches the interrupted batch again; the same command, run again, gets every batch logged
    /// before the kill under its original sequences, the rest new, and each replica applied each action once, in order.
    @Test func aCoordinatorKilledInTheMiddleOfABatchAppliesEachActionOnceWhenTheBatchIsRetried() async throws {
        let (total, size) = (3_000, 250)
        let cluster = try Cluster()
        func startCoordinator(_ run: Int) throws -> Process {
            // 500 ms heartbeats: a 2 s deadline leaves time to kill the coordinator before it writes off the stopped
            // replicas.
            try cluster.start("coordinator-\(run)", [
                "coordinator", "--control", cluster.control, "--publish", cluster.publish, "--heartbeat-ms", "500",
            ])
        }
        let coordinator = try startCoordinator(0)
        for id in ["w1", "w2"] {
            try cluster.startWorker(id, stores: ["kv=kv"], extra: ["--journal", Self.journal(cluster, id).path])
        }
        let client = try await cluster.client(timeout: .seconds(2))
        try await cluster.waitUntilLive(2, client: client)
        let input = cluster.directory.appendingPathComponent("import.jsonl")
        try Self.write((1...total).map(KVHistory.payload), to: input)
        let command = ["dispatch", "kv.set", "--batch", "--batch-size", "\(size)", "--request-id", "import", "--json",
                       "--coordinator", cluster.control]

        // The first three batches complete, as the start of the same import that stopped there; then, with both
        // replicas stopped, the import runs again: those three are answered from the log, the fourth is logged and
        // published, and nothing completes it. Waiting for a sequence to pass mid-import raced a fast bus on a loaded
        // machine, where the whole import could complete between two STATUS round trips.
        let head = cluster.directory.appendingPathComponent("import-head.jsonl")
        try Self.write((1...3 * size).map(KVHistory.payload), to: head)
        let started = try await cluster.run("import-0", command + ["--timeout", "20"], input: head)
        #expect(started.status == 0, "\(started)")
        for id in ["w1", "w2"] { kill(try #require(cluster.pid(id)), SIGSTOP) }
        let interrupted = Task { try await cluster.run("import-1", command + ["--timeout", "3"], input: input) }
        let inFlight = ContinuousClock.now.advanced(by: .seconds(10))
        while ContinuousClock.now < inFlight {
            if let status = try? await client.status(timeout: .milliseconds(500)), status.logLast > status.sequence { break }
            try await Task.sleep(for: .milliseconds(5))
        }
        kill(coordinator.processIdentifier, SIGKILL)
        coordinator.waitUntilExit()
        for id in ["w1", "w2"] { kill(try #require(cluster.pid(id)), SIGCONT) }
        let first = try await interrupted.value
        #expect(first.status == 3, "the interrupted import should time out: \(first)")

        // What the dead coordinator's log holds, as its restart reads it (its journal too): each batch's sequences,
        // and what had not completed.
        let rows = try KilledCoordinatorTests.readLog(cluster)
        let logged = Dictionary(grouping: rows, by: { $0["requestID"] as String }).mapValues { $0.map { $0["sequence"] as UInt64 } }
        let pending = rows.filter { !($0["done"] as Bool) }.map { $0["sequence"] as UInt64 }
        #expect(!pending.isEmpty, "no batch was in flight when the coordinator was killed")
        #expect(rows.count < total, "the whole import was logged before the kill")

        _ = try startCoordinator(1)
        let retry = try await cluster.run("import-2", command + ["--timeout", "20"], input: input)
        #expect(retry.status == 0, "\(retry)")
        let batches = try Self.batchLines(retry.output)
        #expect(batches.map(\.firstSeq) == Array(stride(from: UInt64(1), to: UInt64(total), by: size)), "\(retry)")
        #expect(batches.allSatisfy { $0.count == size && $0.failures.isEmpty }, "\(retry)")
        for (index, batch) in batches.enumerated() {
            guard let sequences = logged["import-\(index)"] else { continue }
            #expect(sequences.first == batch.firstSeq, "import-\(index) was logged from #\(sequences.first ?? 0), answered from #\(batch.firstSeq)")
        }
        #expect(KilledCoordinatorTests.redispatched(cluster, run: 1) > 0, "the restarted coordinator dispatched nothing again")
        let status = try await client.status()
        #expect(status.logLast == UInt64(total), "the retried import logged \(status.logLast) actions for \(total) lines")

        var expected: [String: JSONValue] = [:]
        for index in 1...total { expected[KVHistory.key(index)] = .number(JSONNumber(index)) }
        let last = try await KilledCoordinatorTests.probeUntilEqual(expected, replicas: 2, client: client, cluster: cluster)
        await client.close()
        await cluster.stop()
        for id in ["w1", "w2"] {
            let applied = try JournalEntry.read(Self.journal(cluster, id)).map(\.sequence)
            #expect(applied == Array(1...last), "\(id) applied \(KVHistory.describe(applied)), the log holds #1…#\(last)")
        }
        print("killed mid-batch: the log held \(rows.count) actions, \(pending.count) not completed (#\(pending.first ?? 0)…#\(pending.last ?? 0))")
    }
}
