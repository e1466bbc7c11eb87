import Flux
@testable import FluxBus
import FluxBusProtocol
import Testing

/// A worker busy inside a long handler, scripted on the simulator with no random fault: its guard heartbeats for it,
/// so the heartbeat deadline never writes it off; the acknowledgement deadline alone judges the dispatch in flight.
@Suite("Simulated busy handlers")
struct BusyWorkerScenarioTests {
    /// A cluster past its start: every worker live, some dispatches done, more to come.
    static func warmedUp(seed: UInt64) -> SimCluster {
        let cluster = SimCluster(seed: seed, faults: .nothing, actionsPerClient: 10)
        cluster.run(until: 60_000_000) { cluster in
            cluster.checker.acknowledged.count >= 6
                && cluster.coordinator?.membership.workers.values.filter { $0.state == .live }.count == 4
        }
        return cluster
    }

    /// The workers the coordinator held lost at any moment of the next `micros`, looked at every 10 ms.
    static func writtenOff(_ cluster: SimCluster, within micros: Int64) -> Set<String> {
        var lost: Set<String> = []
        cluster.run(until: cluster.now + micros) { cluster in
            for worker in cluster.coordinator?.membership.workers.values ?? [:].values where worker.state == .lost {
                lost.insert(worker.id)
            }
            return false
        }
        return lost
    }

    static func ledgerOutcome(_ outcomes: [Outcome], on worker: String) -> Outcome? {
        outcomes.first { $0.store == SimLedger.name && $0.worker == worker }
    }

    @Test func aBusyWorkerWhoseGuardHeartbeatsIsNotWrittenOff() {
        let cluster = Self.warmedUp(seed: 5)
        let before = cluster.checker.acknowledged.keys.max() ?? 0
        // Two seconds: five liveness deadlines (400 ms here), within the 5 s acknowledgement deadline.
        cluster.makeBusy(0, for: 2_000_000)
        let lost = Self.writtenOff(cluster, within: 3_000_000)
        #expect(lost.isEmpty, "written off while its guard heartbeated: \(lost.sorted())")
        #expect(ScenarioTests.settle(cluster), "\(cluster.checker.recentSteps.suffix(10))")
        #expect(cluster.checker.violation == nil, "\(cluster.checker.violation ?? "")")
        let unknown = cluster.checker.answers.values.filter { $0.sequence > before }.flatMap(\.outcomes)
            .filter { $0.status == .unknown }
        #expect(unknown.isEmpty, "after #\(before): \(unknown)")
        #expect(cluster.checker.acknowledged.count == 30)
    }

    /// The control: the same pause without a guard (SIGSTOP stops the guard's thread too) is written off.
    @Test func theSamePauseWithoutAGuardIsWrittenOff() {
        let cluster = Self.warmedUp(seed: 5)
        cluster.workers[0].stalledUntil = cluster.now + 2_000_000
        let lost = Self.writtenOff(cluster, within: 3_000_000)
        #expect(lost.contains("w1"), "\(lost.sorted())")
        #expect(ScenarioTests.settle(cluster), "\(cluster.checker.recentSteps.suffix(10))")
        #expect(cluster.checker.violation == nil, "\(cluster.checker.violation ?? "")")
    }

    /// Busy past the acknowledgement deadline: the dispatch completes without the worker, its outcome there
    /// `unknown`; when the handler returns, its late ACK fills in the outcome, which the client, asking again under
    /// the same id, then learns. The worker joins again and catches up.
    @Test func aWorkerBusyPastTheAckDeadlineIsUnknownThenItsOutcomeIsKnown() {
        let cluster = SimCluster(seed: 6, faults: .nothing, actionsPerClient: 4, idleClients: 1)
        cluster.run(until: 60_000_000) { cluster in
            cluster.checker.acknowledged.count == 12
                && cluster.coordinator?.membership.workers.values.filter { $0.state == .live }.count == 4
        }
        cluster.makeBusy(0, for: 6_000_000)
        let id = cluster.checker.newActionID()
        let payload = Array("{\"id\":\(id)}".utf8)
        let slow = SimClient.Request(requestID: "slow", actionIDs: [id], payloads: [payload], sentAt: cluster.now)
        cluster.checker.requested(slow)
        var client = cluster.clients[3]
        client.adopt(slow, at: cluster.now, cluster: cluster)
        cluster.clients[3] = client
        // Past the busy period before settling (which ends every fault, this one too).
        cluster.run(until: cluster.now + 30_000_000) { $0.clients[3].request == nil }
        #expect(ScenarioTests.settle(cluster), "\(cluster.checker.recentSteps.suffix(10))")
        #expect(cluster.checker.violation == nil, "\(cluster.checker.violation ?? "")")
        #expect(cluster.checker.acknowledged.count == 13)
        let history = (cluster.checker.answerHistory["slow"] ?? []).map { Self.ledgerOutcome($0, on: "w1") }
        let first = history.first ?? nil
        #expect(first?.status == .unknown && first?.message.contains("acknowledgement deadline") == true, "\(history)")
        let last = history.last ?? nil
        #expect(history.count > 1 && last?.status == .ok, "\(history)")
        #expect(cluster.workers[0].engine?.phase == .live)
    }
}
