import Flux
import Foundation
import FluxBus
import FluxBusProtocol
import FluxStores
import Testing

/// Watching a store (issue 18, point 9): `BusClient.watch` against real worker processes, a worker's local replica
/// read in process, and `fluxbus watch`.
@Suite("Watching state", .timeLimit(.minutes(1)))
struct WatchTests {
    /// The flight example, with failures (a city before any country; a country with no default city, which the city
    /// store refuses, so price is skipped) among the changes.
    static let actions: [(type: String, json: String)] = (0..<20).flatMap { round -> [(String, String)] in
        [
            ("city-update", #"{"city":"Lyon"}"#),
            ("country-update", #"{"country":"\#(["France", "Japan", "Spain", "Italy"][round % 4])"}"#),
            ("country-update", #"{"country":"Atlantis"}"#),
            ("kv.set", #"{"key":"k","value":\#(round)}"#),
        ]
    } + [("country-update", #"{"country":"Germany"}"#)]

    /// A watcher started before a run of dispatches and one started in its middle both see every ok change of
    /// `price` (whose dependency runs on another process) in order, each state the replicas' own, and end with the
    /// state the worker processes and an in-process worker's local replica hold.
    @Test func watchersBeforeAndDuringARunSeeEveryChange() async throws {
        let cluster = try Cluster()
        try cluster.startCoordinator()
        try cluster.startWorker("w1", stores: ["country=country", "city=city"])
        try cluster.startWorker("w2", stores: ["price=price", "kv=kv"])
        let local = Worker(configuration: .init(id: "w3", coordinator: cluster.control, stores: [HostedStore(PriceStore.self)]))
        let running = Task { try await local.run() }
        let client = try await cluster.client()
        try await cluster.waitUntilLive(3, client: client)

        var early = client.watch(PriceStore.self).makeAsyncIterator()
        let earlyFirst = try #require(try await early.next())
        #expect(earlyFirst.kind == .initial && earlyFirst.state == PriceStore.State())
        var late: StateWatch<PriceStore>.Iterator?
        var lateFirst: StateChange<PriceStore.State>?
        var last: UInt64 = 0
        for (index, action) in Self.actions.enumerated() {
            if index == Self.actions.count / 2 {
                late = client.watch(PriceStore.self).makeAsyncIterator()
                lateFirst = try await late!.next()
            }
            last = try await client.dispatch(action.type, json: action.json).sequence
        }
        let lateStart = try #require(lateFirst)
        #expect(lateStart.kind == .initial && lateStart.sequence > earlyFirst.sequence)

        // What the log recorded: the sequences at which price ran ok.
        var okSequences: [UInt64] = []
        var notOK = 0
        var from: UInt64 = 1
        while from <= last {
            let entries = try await client.history(from: from, to: last)
            guard let end = entries.last?.sequence else { break }
            okSequences += entries.filter { $0.outputs.contains { $0.store == "price" && $0.status == .ok } }.map(\.sequence)
            notOK += entries.filter { $0.outputs.contains { $0.store == "price" && $0.status != .ok } }.count
            from = end + 1
        }
        #expect(okSequences.count >= 20 && notOK >= 20, "price should run ok, and fail or be skipped, often: \(okSequences)")
        #expect(okSequences.last == last)

        func collect(_ iterator: inout StateWatch<PriceStore>.Iterator) async throws -> [StateChange<PriceStore.State>] {
            var changes: [StateChange<PriceStore.State>] = []
            while changes.last.map({ $0.sequence < last }) ?? true, let change = try await iterator.next() { changes.append(change) }
            return changes
        }
        let earlyChanges = try await collect(&early)
        var lateIterator = try #require(late)
        let lateChanges = try await collect(&lateIterator)
        for (changes, start) in [(earlyChanges, earlyFirst.sequence), (lateChanges, lateStart.sequence)] {
            #expect(changes.map(\.sequence) == okSequences.filter { $0 > start })
            #expect(changes.allSatisfy { $0.kind == .changed })
            for change in changes {
                let state = change.state
                #expect(state.price == Flight.price(country: state.country ?? "", city: state.city ?? ""), "#\(change.sequence): \(state)")
            }
        }

        let onBus = try await client.state(of: "price")
        let typed = try await client.state(of: PriceStore.self)
        let inProcess = try await local.state(of: PriceStore.self)
        #expect(inProcess.sequence == last && onBus.sequence == last)
        #expect(earlyChanges.last?.state == typed && lateChanges.last?.state == typed && inProcess.state == typed)
        #expect(typed == PriceStore.State(country: "Germany", city: "Berlin", price: Flight.price(country: "Germany", city: "Berlin")))
        #expect(StateDigest.fnv1a64(try JSONCoding.encode(inProcess.state)) == onBus.digest)
        await #expect(throws: BusError.self) { _ = try await local.state(of: CounterStore.self) }

        local.stop()
        try await running.value
        await client.close()
        let statuses = await cluster.stop()
        #expect(statuses.values.allSatisfy { $0 == 0 }, "exit statuses \(statuses)\n\(cluster.allLogs())")
    }

    /// A watcher that reads nothing during a burst 5,000 times larger than its buffer of publications still sees
    /// every change, one by one, with no resynchronization: what it applies comes from the history.
    @Test func aWatcherBehindABurstLargerThanItsBufferMissesNothing() async throws {
        let cluster = try Cluster()
        try cluster.startCoordinator()
        try cluster.startWorker("w1", stores: ["counter=counter"], extra: ["--log-level", "warning"])
        let client = try await cluster.client(timeout: .seconds(30))
        try await cluster.waitUntilLive(1, client: client)

        var watch = client.watch(CounterStore.self, named: nil, buffer: 4).makeAsyncIterator()
        let first = try #require(try await watch.next())
        #expect(first.sequence == 0 && first.state.value == 0)
        let add = try BatchAction(Action(CounterStore.add, .init(by: 1)))
        for _ in 0..<5 { try await client.dispatchBatch(Array(repeating: add, count: 4_000)) }

        var previous = first
        while previous.sequence < 20_000, let change = try await watch.next() {
            guard change.kind == .changed, change.sequence == previous.sequence + 1, change.state.value == previous.state.value + 1 else {
                Issue.record("after #\(previous.sequence) (\(previous.state.value)) came \(change.kind) #\(change.sequence) (\(change.state.value))")
                break
            }
            previous = change
        }
        #expect(previous.sequence == 20_000 && previous.state.value == 20_000)
        await client.close()
        await cluster.stop()
    }

    /// Watchers sharing one client read the history concurrently: their requests take turns (REPLAY has no request
    /// id), so each still sees every change.
    @Test func watchersSharingAClientEachSeeEveryChange() async throws {
        let cluster = try Cluster()
        try cluster.startCoordinator()
        try cluster.startWorker("w1", stores: ["counter=counter"], extra: ["--log-level", "warning"])
        let client = try await cluster.client(timeout: .seconds(30))
        try await cluster.waitUntilLive(1, client: client)
        let add = try BatchAction(Action(CounterStore.add, .init(by: 1)))
        let finals = try await withThrowingTaskGroup(of: [UInt64].self) { group in
            for _ in 0..<3 {
                group.addTask {
                    var sequences: [UInt64] = []
                    for try await change in client.watch(CounterStore.self, named: nil, buffer: 16) {
                        #expect(change.state.value == Int(change.sequence) && !change.isResynchronized)
                        sequences.append(change.sequence)
                        if change.sequence >= 3_000 { break }
                    }
                    return sequences
                }
            }
            for _ in 0..<3 { try await client.dispatchBatch(Array(repeating: add, count: 1_000)) }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(finals.count == 3)
        for sequences in finals {
            let start = try #require(sequences.first)
            #expect(sequences == Array(start...3_000), "a watcher saw \(sequences.count) states from #\(start)")
        }
        await client.close()
        await cluster.stop()
    }

    /// A watcher further behind than the log reaches says so: its next element is a fresh state, marked
    /// resynchronized, and it goes on change by change from there.
    @Test func aWatcherBehindACompactedLogResynchronizes() async throws {
        let cluster = try Cluster()
        try cluster.startCoordinator(["--retain", "20"])
        try cluster.startWorker("w1", stores: ["counter=counter"], extra: ["--log-level", "warning"])
        let client = try await cluster.client()
        try await cluster.waitUntilLive(1, client: client)

        var watch = client.watch(CounterStore.self, named: nil, buffer: 4).makeAsyncIterator()
        #expect(try await watch.next()?.sequence == 0)
        let add = try BatchAction(Action(CounterStore.add, .init(by: 1)))
        try await client.dispatchBatch(Array(repeating: add, count: 300))
        var status = try await client.status()
        let deadline = ContinuousClock.now.advanced(by: .seconds(20))
        while status.logOldest <= 1, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
            status = try await client.status()
        }
        try #require(status.logOldest > 1, "the log was never compacted\n\(cluster.allLogs())")

        let resynchronized = try #require(try await watch.next())
        #expect(resynchronized.isResynchronized)
        #expect(resynchronized.sequence >= status.logOldest - 1 && resynchronized.state.value == Int(resynchronized.sequence))
        var previous = resynchronized
        try await client.dispatch(Action(CounterStore.add, .init(by: 5)))
        while previous.sequence < 301, let change = try await watch.next() {
            #expect(change.kind == .changed && change.sequence == previous.sequence + 1)
            previous = change
        }
        #expect(previous.sequence == 301 && previous.state.value == 305)
        await client.close()
        await cluster.stop()
    }

    /// `fluxbus watch --json` prints the state, then one line per change when each lands alone, with the sequence
    /// and digest of the replica's state; `--count` ends it; a store nobody hosts exits 4.
    @Test func theCommandPrintsTheStateThenEachChange() async throws {
        let cluster = try Cluster()
        try cluster.startCoordinator()
        try cluster.startWorker("w1", stores: ["counter=counter"])
        let client = try await cluster.client()
        try await cluster.waitUntilLive(1, client: client)

        let watch = try cluster.start("watch", ["watch", "counter", "--json", "--count", "3", "--coordinator", cluster.control])
        func lines() -> [String] { cluster.log("watch").split(separator: "\n").map(String.init).filter { $0.hasPrefix("{") } }
        func waitForLines(_ count: Int) async throws {
            while lines().count < count, watch.isRunning { try await Task.sleep(for: .milliseconds(20)) }
        }
        try await waitForLines(1)
        try await client.dispatch(Action(CounterStore.add, .init(by: 2)))
        try await waitForLines(2)
        try await client.dispatch(Action(CounterStore.add, .init(by: 3)))
        while watch.isRunning { try await Task.sleep(for: .milliseconds(20)) }
        #expect(watch.terminationStatus == 0, "\(cluster.log("watch"))")
        func line(_ seq: Int, _ value: Int) -> String {
            let state = #"{"value":\#(value)}"#
            let digest = String(StateDigest.fnv1a64(Array(state.utf8)), radix: 16)
            return #"{"digest":"\#(String(repeating: "0", count: 16 - digest.count) + digest)","seq":\#(seq),"state":\#(state),"store":"counter","worker":"w1"}"#
        }
        #expect(lines() == [line(0, 0), line(1, 2), line(2, 5)], "\(cluster.log("watch"))")

        let text = try await cluster.run("text", ["watch", "counter", "--count", "1", "--coordinator", cluster.control])
        #expect(text.status == 0 && text.output == "#2 {\"value\":5}\n", "\(text)")
        let unknown = try await cluster.run("unknown", ["watch", "nosuch", "--coordinator", cluster.control])
        #expect(unknown.status == 4 && unknown.error.contains("nosuch"), "\(unknown)")
        await client.close()
        await cluster.stop()
    }
}
