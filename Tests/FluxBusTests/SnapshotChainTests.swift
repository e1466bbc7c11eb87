import Flux
import Foundation
import FluxBusProtocol
import FluxStores
import Testing
import ZeroMQ

@testable import FluxBus

/// A worker that starts from a SNAPSHOT keeps its log chain from the one the SNAPSHOT carries (docs/PROTOCOL.md,
/// version 6). Before, it said 0 ("not known") in every later HELLO, so a coordinator whose log lost what such a
/// worker had applied, and gave the sequence to another action, welcomed it with another history (found by the
/// simulator under power cuts that lose commits).
@Suite("A worker started from snapshots still proves its history", .timeLimit(.minutes(1)))
struct SnapshotChainTests {
    /// Joins a worker from a SNAPSHOT of `counter` at 6 carrying `chain`, lets it replay 7...10, then makes it join
    /// again under the next epoch and returns that HELLO.
    static func helloAfterStartingFromASnapshot(chain: (ReferenceHistory) -> UInt64) async throws -> (Message.Hello, expected: UInt64) {
        let epoch = SnapshotTests.epoch
        let history = try ReferenceHistory([CounterStore.self], SnapshotTests.adds(Array(1...10)), epoch: epoch)
        let chains = history.entries.reduce(into: [UInt64(0)]) { chains, entry in
            chains.append(LogChain.next(
                after: chains.last!, sequence: entry.sequence, actionType: entry.actionType, payload: entry.payload,
                error: entry.error))
        }
        let given = chain(history)
        let coordinator = try RawCoordinator()
        let (worker, task) = coordinator.startWorker("w1", [HostedStore(CounterStore.self)])
        let state = history.states[6]["counter"]!
        let snapshot = Message.snapshot(.init(
            epoch: epoch, store: "counter", sequence: 6, digest: StateDigest.fnv1a64(state), chain: given, state: state))
        _ = try await SnapshotTests.play(coordinator, head: 10, stores: []) {
            [snapshot, coordinator.welcome(epoch: epoch, sequence: 10)]
        } onFetch: { [history.replay($0, last: 10, epoch: epoch)] }
        let hello = try await onDedicatedThread {
            try RestartedCoordinatorTests.await(coordinator, heartbeating: epoch + 1, at: 10) {
                if case .hello(let hello) = $0 { hello } else { nil }
            }
        }
        _ = try await SnapshotTests.finish(worker, task)
        coordinator.close()
        return (hello, given == 0 ? 0 : chains[10])
    }

    @Test func aWorkerStartedFromASnapshotReportsTheChainItContinued() async throws {
        let chainAt6 = { (history: ReferenceHistory) in
            history.entries.prefix(6).reduce(UInt64(0)) {
                LogChain.next(after: $0, sequence: $1.sequence, actionType: $1.actionType, payload: $1.payload, error: $1.error)
            }
        }
        let (hello, expected) = try await Self.helloAfterStartingFromASnapshot(chain: chainAt6)
        #expect(hello.applied == 10 && hello.appliedEpoch == SnapshotTests.epoch)
        #expect(hello.chain == expected && expected != 0, "the chain at #10, continued from the snapshot's at #6")
    }

    /// A SNAPSHOT that does not say (a snapshot recorded before the log kept chains) leaves the chain unknown, as before.
    @Test func aSnapshotWithoutAChainLeavesItUnknown() async throws {
        let (hello, expected) = try await Self.helloAfterStartingFromASnapshot { _ in 0 }
        #expect(hello.applied == 10 && hello.chain == 0 && expected == 0)
    }
}
