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
        for index in 1...500 { expected[KVHistory.key(index)] = .number(Double(index)) }
        let result = try await client.dispatch("kv.set", json: #"{"key":"probe","value":0}"#)
        expected["probe"] = .number(0)
        let digest = StateDigest.fnv1a64(try JSONCoding.encode(expected))
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
}
