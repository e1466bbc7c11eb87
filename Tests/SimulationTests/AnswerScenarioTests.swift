import Flux
@testable import FluxBus
import FluxBusProtocol
import Testing

/// Nothing dropped without an answer, scripted on the simulator with no random fault (only slow links where said): a coordinator stopping on a
/// storage failure answers every client waiting for it, and every client waiting on one request id is answered.
@Suite("Simulated answers to every waiter")
struct AnswerScenarioTests {
    /// Workers stall, so that a dispatch stays in flight while the other clients' requests queue behind it; then
    /// one more request makes the log write, which fails. Every waiting client gets ERROR code 7 in the step the
    /// coordinator stops, and its retry under the same id after the restart is answered.
    @Test func aStorageFailureAnswersEveryWaitingClient() {
        // Slow links (up to 20 ms, no other fault), so that requests are still queued when the workers stall.
        var slowLinks = FaultPlan.nothing
        slowLinks.latency = 20...20_000
        let cluster = SimCluster(seed: 5, faults: slowLinks, actionsPerClient: 6, idleClients: 1)
        cluster.countsEverySend()
        cluster.run(until: 60_000_000) { $0.checker.acknowledged.count >= 3 }
        for index in cluster.workers.indices { cluster.workers[index].stalledUntil = cluster.now + 800_000 }
        let queued = cluster.run(until: cluster.now + 700_000) { cluster in
            guard let coordinator = cluster.coordinator else { return false }
            return !coordinator.flights.isIdle && coordinator.waitingRequesters.count == 3
        }
        #expect(queued, "one request in flight and two queued behind it")
        cluster.faults.flushFailure = 1
        let id = cluster.checker.newActionID()
        let last = SimClient.Request(requestID: "last", actionIDs: [id], payloads: [Array("{\"id\":\(id)}".utf8)], sentAt: cluster.now)
        cluster.checker.requested(last)
        var client = cluster.clients[3]
        client.adopt(last, at: cluster.now, cluster: cluster)
        cluster.clients[3] = client
        let stopped = cluster.run(until: cluster.now + 5_000_000) { $0.coordinator == nil }
        #expect(stopped, "the coordinator stopped on the failed flush")
        #expect(cluster.checker.violation == nil, "\(cluster.checker.violation ?? "")")
        #expect(cluster.checker.answeredAtStorageStops == 4, "the four waiting requests were answered as it stopped")
        // The ERRORs are on their way; once they arrive, each client has one.
        cluster.run(until: cluster.now + 50_000)
        #expect(cluster.clients.map(\.internalErrors) == [1, 1, 1, 1])
        #expect(ScenarioTests.settle(cluster), "\(cluster.checker.recentSteps.suffix(10))")
        #expect(cluster.checker.violation == nil, "\(cluster.checker.violation ?? "")")
        #expect(cluster.checker.acknowledged.count == 19, "every action answered after the restart")
    }

    /// Twelve more connections send one request id while its dispatch is held in flight by stalled workers: all
    /// get the result when it completes, none has to retry.
    @Test func manyClientsWaitingOnOneRequestIDAreAllAnswered() {
        let cluster = SimCluster(seed: 6, faults: .nothing, actionsPerClient: 3, idleClients: 12)
        cluster.countsEverySend()
        cluster.run(until: 60_000_000) { $0.checker.acknowledged.count >= 3 }
        for index in cluster.workers.indices { cluster.workers[index].stalledUntil = cluster.now + 500_000 }
        let id = cluster.checker.newActionID()
        let shared = SimClient.Request(requestID: "shared", actionIDs: [id], payloads: [Array("{\"id\":\(id)}".utf8)], sentAt: cluster.now)
        cluster.checker.requested(shared)
        for index in 3..<15 {
            var client = cluster.clients[index]
            client.adopt(shared, at: cluster.now, cluster: cluster)
            cluster.clients[index] = client
        }
        #expect(ScenarioTests.settle(cluster), "\(cluster.checker.recentSteps.suffix(10))")
        #expect(cluster.checker.violation == nil, "\(cluster.checker.violation ?? "")")
        #expect(cluster.clients[3...].allSatisfy { $0.request == nil }, "every waiter answered")
        #expect(cluster.clients[3...].map(\.sends) == Array(repeating: 1, count: 12), "answered without a retry")
        #expect(cluster.checker.answers["shared"] != nil)
    }
}
