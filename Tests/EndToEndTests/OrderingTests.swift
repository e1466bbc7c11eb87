import Flux
import Foundation
import FluxBus
import FluxBusProtocol
import FluxStores
import Testing

/// One line of a worker's `--journal`.
struct JournalEntry {
    let sequence: UInt64
    let store: String
    let status: String
    let nanos: UInt64

    static func read(_ url: URL) throws -> [JournalEntry] {
        try String(contentsOf: url, encoding: .utf8).split(separator: "\n").map { line in
            let fields = line.split(separator: "\t")
            guard fields.count == 4, let sequence = UInt64(fields[0]), let nanos = UInt64(fields[3]) else {
                throw ClusterError("malformed journal line '\(line)' in \(url.lastPathComponent)")
            }
            return JournalEntry(sequence: sequence, store: String(fields[1]), status: String(fields[2]), nanos: nanos)
        }
    }
}

@Suite("Ordering across worker processes", .timeLimit(.minutes(1)))
struct OrderingTests {
    /// country → city → price on three processes: every dispatch sees country, then city, then price, and no
    /// dispatch reaches any store before the previous one is complete. Each worker journals what it applied, with
    /// the machine-wide monotonic clock, and the test merges the journals.
    @Test func theFlightChainKeepsItsOrderOverAThousandDispatches() async throws {
        let cluster = try Cluster()
        try cluster.startCoordinator()
        for store in ["country", "city", "price"] {
            try cluster.startWorker(
                "w-\(store)", stores: ["\(store)=\(store)"],
                extra: ["--journal", cluster.directory.appendingPathComponent("\(store).journal").path])
        }
        let client = try await cluster.client()
        try await cluster.waitUntilLive(3, client: client)

        let countries = Flight.defaultCities.keys.sorted()
        var expected: (country: String, city: String) = ("", "")
        var kinds: [UInt64: String] = [:]
        for index in 0..<1_000 {
            let result: DispatchResult
            if index % 3 == 2 {
                let city = "City\(index)"
                result = try await client.dispatch(Action(Flight.cityUpdate, .init(city: city)))
                expected.city = city
                kinds[result.sequence] = "city"
            } else {
                let country = countries[index % countries.count]
                result = try await client.dispatch(Action(Flight.countryUpdate, .init(country: country)))
                expected = (country, Flight.defaultCities[country]!)
                kinds[result.sequence] = "country"
            }
            #expect(result.succeeded, "#\(result.sequence): \(result.stores)")
        }
        // Price read city's output, which carried country's, across three processes.
        let price = try await client.state(of: "price")
        let state = try JSONDecoder().decode(PriceStore.State.self, from: Data(price.state))
        #expect(state == .init(country: expected.country, city: expected.city,
                               price: Flight.price(country: expected.country, city: expected.city)))
        await client.close()
        let statuses = await cluster.stop()
        #expect(statuses.values.allSatisfy { $0 == 0 }, "exit statuses \(statuses)")

        var entries: [String: [JournalEntry]] = [:]
        for store in ["country", "city", "price"] {
            entries[store] = try JournalEntry.read(cluster.directory.appendingPathComponent("\(store).journal"))
            let sequences = entries[store]!.map(\.sequence)
            #expect(sequences == sequences.sorted() && Set(sequences).count == sequences.count, "\(store) applied out of order or twice")
            #expect(entries[store]!.allSatisfy { $0.status == "ok" })
        }
        let bySequence = Dictionary(grouping: entries.values.joined(), by: \.sequence)
        #expect(bySequence.count == 1_000)
        for (sequence, applied) in bySequence {
            let order = applied.sorted { $0.nanos < $1.nanos }.map(\.store)
            #expect(order == (kinds[sequence] == "country" ? ["country", "city", "price"] : ["city", "price"]), "#\(sequence): \(order)")
        }
        let sequences = bySequence.keys.sorted()
        for (previous, next) in zip(sequences, sequences.dropFirst()) {
            let previousEnd = bySequence[previous]!.map(\.nanos).max()!
            let nextStart = bySequence[next]!.map(\.nanos).min()!
            #expect(previousEnd < nextStart, "#\(next) reached a store before #\(previous) was complete")
        }
    }
}
