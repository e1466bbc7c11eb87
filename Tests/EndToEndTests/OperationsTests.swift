import Foundation
import FluxBus
import FluxBusProtocol
import FluxBusTools
import Testing

/// Service nodes under real signals, and the operator's commands: tail, batch dispatch, wait-ready.
@Suite("Operating the bus", .timeLimit(.minutes(1)))
struct OperationsTests {
    @Test func aWorkerStoppedWithSIGTERMFinishesSaysGoodbyeAndIsMarkedGone() async throws {
        let cluster = try Cluster()
        try cluster.startCoordinator()
        try cluster.startWorker("w1", stores: ["counter=counter"])
        try cluster.startWorker("w2", stores: ["counter=counter"])
        let client = try await cluster.client()
        try await cluster.waitUntilLive(2, client: client)

        for index in 1...400 {
            if index == 100 { kill(try #require(cluster.pid("w2")), SIGTERM) }
            let result = try await client.dispatch("counter.add", json: #"{"by":1}"#)
            #expect(result.succeeded)
            // w2 may leave with a dispatch published but not yet read: the result then says it left, never that
            // it went silent.
            for outcome in result.outcomes where outcome.status == .unknown {
                #expect(outcome.worker == "w2" && outcome.message.contains("left: shutting down"), "\(outcome)")
            }
        }
        let status = try await client.status()
        #expect(status.workers.first { $0.id == "w2" }?.state == .gone)
        #expect(status.workers.first { $0.id == "w1" }?.state == .live)
        await client.close()
        let statuses = await cluster.stop()
        #expect(statuses["w2"] == 0)
        #expect(statuses["coordinator"] == 0)
    }

    @Test func aCoordinatorStoppedWithSIGINTAnswersEveryRequestAndExitsZero() async throws {
        let cluster = try Cluster()
        let coordinator = try cluster.startCoordinator()
        let journal = cluster.directory.appendingPathComponent("w1.journal")
        try cluster.startWorker("w1", stores: ["counter=counter"], extra: ["--journal", journal.path])
        let client = try await cluster.client(timeout: .seconds(20))
        try await cluster.waitUntilLive(1, client: client)

        // 300 requests in flight at once, then SIGINT while most are still queued.
        let outcomes = await withTaskGroup(of: String.self) { group in
            for _ in 0..<300 {
                group.addTask {
                    do {
                        return try await client.dispatch("counter.add", json: #"{"by":1}"#).succeeded ? "ok" : "failed"
                    } catch let error as BusError {
                        return error.remoteCode == .shuttingDown ? "refused" : "error: \(error)"
                    } catch {
                        return "error: \(error)"
                    }
                }
            }
            // SIGINT once the first has been applied (a fixed 20 ms was sometimes before any, on a loaded machine).
            let deadline = ContinuousClock.now.advanced(by: .seconds(10))
            while ContinuousClock.now < deadline, ((try? JournalEntry.read(journal).count) ?? 0) == 0 {
                try? await Task.sleep(for: .milliseconds(5))
            }
            kill(coordinator.processIdentifier, SIGINT)
            return await group.reduce(into: [String]()) { $0.append($1) }
        }
        coordinator.waitUntilExit()
        #expect(coordinator.terminationStatus == 0)
        let completed = outcomes.filter { $0 == "ok" }.count
        #expect(outcomes.allSatisfy { $0 == "ok" || $0 == "refused" }, "\(Set(outcomes))")
        #expect(completed > 0)
        // Everything the coordinator said was done, the worker applied: no more, no less.
        let applied = try JournalEntry.read(journal).count
        #expect(applied == completed)
        await client.close()
        await cluster.stop()
    }

    @Test func tailBatchAndWaitReady() async throws {
        let cluster = try Cluster()
        try cluster.startCoordinator()
        try cluster.startWorker("w1", stores: ["counter=counter"])
        let endpoint = ["--coordinator", cluster.control]

        let ready = try CommandLineTests.fluxbus(["status", "--wait-ready", "1", "--timeout", "20", "--json"] + endpoint)
        #expect(ready.status == 0)
        #expect(try JSONDecoder().decode(StatusView.JSON.self, from: Data(ready.output.utf8)).workers.first?.state == "live")

        let tail = try cluster.start("tail", ["tail", "--count", "5", "--json"] + endpoint)
        try await Task.sleep(for: .milliseconds(300))
        let input = cluster.directory.appendingPathComponent("batch.jsonl")
        try Data(String(repeating: "{\"by\":2}\n", count: 300).utf8).write(to: input)
        let batch = try CommandLineTests.fluxbus(["dispatch", "counter.add", "--batch", "--batch-size", "128"] + endpoint, input: input)
        #expect(batch.status == 0, "\(batch.output)\n\(batch.error)\n\(cluster.allLogs())")
        #expect(batch.output.contains("300 dispatched as counter.add in 3 batches, #1 to #300, 0 with a store that failed"), "\(batch.output)")
        tail.waitUntilExit()
        #expect(tail.terminationStatus == 0)
        let tailed = try cluster.log("tail").split(separator: "\n").map { try JSONDecoder().decode(TailView.JSON.self, from: Data($0.utf8)) }
        #expect(tailed.map(\.seq) == [1, 2, 3, 4, 5])
        #expect(tailed.allSatisfy { $0.stores == ["counter": "ok"] })

        let history = try CommandLineTests.fluxbus(["tail", "--from", "298", "--count", "3"] + endpoint)
        #expect(history.output.split(separator: "\n").map { $0.prefix(5) } == ["#298 ", "#299 ", "#300 "])
        #expect(try CommandLineTests.fluxbus(["state", "counter"] + endpoint).output.contains(#"{"value":600}"#))

        let notEnough = try CommandLineTests.fluxbus(["status", "--wait-ready", "2", "--timeout", "0.5"] + endpoint)
        #expect(notEnough.status == 3)
        await cluster.stop()
    }

    /// A worker waiting for a RELEASE that will never come (its coordinator was killed) still stops on SIGTERM:
    /// after ``Worker/shutdownDeadline`` it gives up on the dispatch in hand and exits 0.
    @Test func aWorkerWaitingOnAGoneCoordinatorStillStopsOnSIGTERM() async throws {
        let cluster = try Cluster()
        // Deadlines far off (a 20 s liveness deadline with 5 s heartbeats): the stopped worker must not be written off
        // while the dispatch is published, or city would be settled as skipped and w-city hold nothing.
        let coordinator = try cluster.startCoordinator(["--ack-timeout", "30", "--heartbeat-ms", "5000"])
        try cluster.startWorker("w-country", stores: ["country=country"])
        try cluster.startWorker("w-city", stores: ["city=city"])
        let client = try await cluster.client(timeout: .seconds(2))
        try await cluster.waitUntilLive(2, client: client)

        // Country's worker is stopped, so the coordinator never releases country to city's worker.
        kill(try #require(cluster.pid("w-country")), SIGSTOP)
        // It never completes; the wait only gives the coordinator time to publish it, even on a loaded machine (with
        // 300 ms, a run saw the coordinator killed before w-city had the dispatch in hand).
        _ = try? await client.dispatch("country-update", json: #"{"country":"Japan"}"#, timeout: .seconds(2))
        kill(coordinator.processIdentifier, SIGKILL)
        await client.close()

        let city = try #require(cluster.pid("w-city"))
        kill(city, SIGTERM)
        // A liveness bound, not a measurement: a worker still running after its shutdown deadline and a margin is
        // SIGKILLed by `stop`, and then does not exit 0.
        let statuses = await cluster.processes.stop(["w-city"], grace: Worker.shutdownDeadline + .seconds(8))
        #expect(statuses["w-city"] == 0, "\(cluster.log("w-city"))")
        #expect(cluster.log("w-city").contains("stopping without finishing the dispatch in hand"))
        kill(try #require(cluster.pid("w-country")), SIGCONT)
        await cluster.stop()
    }
}
