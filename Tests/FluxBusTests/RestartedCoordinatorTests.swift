import Flux
import Foundation
import FluxBusProtocol
import FluxStores
import Testing
import ZeroMQ

@testable import FluxBus

@Suite("A worker and a coordinator that restarts with its log", .timeLimit(.minutes(1)))
struct RestartedCoordinatorTests {
    /// Heartbeats `epoch` on PUB until a message for which `until` returns a value arrives on the ROUTER.
    static func await<T>(
        _ coordinator: RawCoordinator, heartbeating epoch: UInt64, at head: UInt64, _ until: (Message) -> T?
    ) throws -> T {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            try coordinator.publish(.heartbeat(.init(epoch: epoch, sequence: head)))
            if let (_, message) = try coordinator.receive(timeout: .milliseconds(20)), let value = until(message) { return value }
        }
        throw PollTimeout(description: "timed out heartbeating epoch \(epoch)")
    }

    /// Sequence 1 runs under epoch 1; the coordinator restarts (epoch 2) with 1 not completed. The worker joins again
    /// declaring 1, goes live although WELCOME says 0, and when 1 comes again it re-acknowledges it under epoch 2 with
    /// the same results, without running it again.
    @Test func theDispatchInFlightIsReacknowledgedUnderTheNewEpoch() async throws {
        let coordinator = try RawCoordinator()
        let (worker, task) = coordinator.startWorker("w1", [HostedStore(CounterStore.self)])
        let id = Array("w1".utf8)
        let action = { @Sendable (epoch: UInt64) in
            Message.action(.init(
                epoch: epoch, sequence: 1, actionType: "counter.add", payload: Array(#"{"by":5}"#.utf8),
                plan: [PlanStep(store: "counter")]))
        }
        let (before, hello, ready, after) = try await onDedicatedThread {
            guard case .hello? = try coordinator.receive(timeout: .seconds(5))?.message else {
                throw PollTimeout(description: "no HELLO")
            }
            try coordinator.send(coordinator.welcome(epoch: 1, sequence: 0), to: id)
            _ = try Self.await(coordinator, heartbeating: 1, at: 0) { if case .ready = $0 { true } else { nil } }
            try coordinator.send(action(1), to: id)
            let before = try Self.await(coordinator, heartbeating: 1, at: 1) { if case .ack(let ack) = $0 { ack } else { nil } }
            // The restart: a new epoch on PUB, and a log that completed nothing.
            let hello = try Self.await(coordinator, heartbeating: 2, at: 0) { if case .hello(let hello) = $0 { hello } else { nil } }
            try coordinator.send(coordinator.welcome(epoch: 2, sequence: 0), to: id)
            let ready = try Self.await(coordinator, heartbeating: 2, at: 0) { if case .ready(let ready) = $0 { ready } else { nil } }
            try coordinator.send(action(2), to: id)
            let after = try Self.await(coordinator, heartbeating: 2, at: 1) { if case .ack(let ack) = $0 { ack } else { nil } }
            return (before, hello, ready, after)
        }
        let events = try await SnapshotTests.finish(worker, task)
        coordinator.close()

        #expect(before.epoch == 1 && before.sequence == 1)
        #expect(hello.stores.map(\.lastApplied) == [1] && hello.appliedEpoch == 1)
        #expect(ready.epoch == 2 && ready.lastApplied == 1)
        #expect(after.epoch == 2 && after.sequence == 1)
        #expect(after.results == before.results)
        #expect(SnapshotTests.applied(events, "counter") == [1])
    }

    /// STATE carries the sequence its state includes: while `ledger` waits for a release of `check`, `audit` has
    /// already run sequence 1 and `ledger` has not.
    @Test func stateDuringADispatchNamesEachStoresSequence() async throws {
        let coordinator = try RawCoordinator()
        let (worker, task) = coordinator.startWorker("w1", [HostedStore(AuditStore.self), HostedStore(LedgerStore.self)])
        let id = Array("w1".utf8)
        let (audit, waiting, done) = try await onDedicatedThread {
            guard case .hello? = try coordinator.receive(timeout: .seconds(5))?.message else {
                throw PollTimeout(description: "no HELLO")
            }
            try coordinator.send(coordinator.welcome(epoch: 1, sequence: 0), to: id)
            _ = try Self.await(coordinator, heartbeating: 1, at: 0) { if case .ready = $0 { true } else { nil } }
            try coordinator.send(.action(.init(
                epoch: 1, sequence: 1, actionType: "order.place", payload: Array(#"{"qty":4}"#.utf8),
                plan: [PlanStep(store: "check"), PlanStep(store: "audit"), PlanStep(store: "ledger", waitsFor: ["check"])])), to: id)
            _ = try Self.await(coordinator, heartbeating: 1, at: 1) { if case .ack = $0 { true } else { nil } }
            func state(_ store: String) throws -> Message.State {
                try coordinator.send(.stateRequest(.init(requestID: store, store: store)), to: id)
                return try Self.await(coordinator, heartbeating: 1, at: 1) { if case .state(let state) = $0 { state } else { nil } }
            }
            let audit = try state("audit")
            let waiting = try state("ledger")
            try coordinator.send(.release(.init(epoch: 1, sequence: 1, outputs: [
                StoreOutput(store: "check", status: .ok, output: Array(#"{"lastQty":4}"#.utf8)),
            ])), to: id)
            _ = try Self.await(coordinator, heartbeating: 1, at: 1) {
                if case .ack(let ack) = $0, ack.results.contains(where: { $0.store == "ledger" }) { true } else { nil }
            }
            return (audit, waiting, try state("ledger"))
        }
        _ = try await SnapshotTests.finish(worker, task)
        coordinator.close()

        #expect(audit.sequence == 1 && text(audit) == #"{"orders":1}"#)
        #expect(waiting.sequence == 0 && text(waiting) == #"{"entries":0,"total":0}"#)
        #expect(done.sequence == 1 && text(done) == #"{"entries":1,"total":4}"#)
    }

    /// A dependent's ACK says what it read of its dependency (PROTOCOL.md, Appendix F): the released output when it
    /// ran, `skipped` when the dependency failed; and a duplicate ACTION, as a restarted coordinator sends it, is
    /// acknowledged again with the same digest, which is what lets that coordinator catch a decision its log lost.
    @Test func aDependentsAckSaysWhatItReadAndSaysItAgain() async throws {
        let coordinator = try RawCoordinator()
        let (worker, task) = coordinator.startWorker("w1", [HostedStore(LedgerStore.self)])
        let id = Array("w1".utf8)
        let checked = StoreOutput(store: "check", status: .ok, output: Array(#"{"lastQty":4}"#.utf8))
        let refused = StoreOutput(store: "check", status: .failed, message: "too many")
        let action = { @Sendable (epoch: UInt64, sequence: UInt64) in
            Message.action(.init(
                epoch: epoch, sequence: sequence, actionType: "order.place", payload: Array(#"{"qty":4}"#.utf8),
                plan: [PlanStep(store: "check"), PlanStep(store: "ledger", waitsFor: ["check"])]))
        }
        let (ran, skipped, again) = try await onDedicatedThread {
            guard case .hello? = try coordinator.receive(timeout: .seconds(5))?.message else {
                throw PollTimeout(description: "no HELLO")
            }
            try coordinator.send(coordinator.welcome(epoch: 1, sequence: 0), to: id)
            _ = try Self.await(coordinator, heartbeating: 1, at: 0) { if case .ready = $0 { true } else { nil } }
            func run(_ sequence: UInt64, releasing output: StoreOutput) throws -> StoreResult {
                try coordinator.send(action(1, sequence), to: id)
                try coordinator.send(.release(.init(epoch: 1, sequence: sequence, outputs: [output])), to: id)
                return try Self.await(coordinator, heartbeating: 1, at: sequence) {
                    if case .ack(let ack) = $0, ack.sequence == sequence { ack.results.first } else { nil }
                }
            }
            let ran = try run(1, releasing: checked)
            let skipped = try run(2, releasing: refused)
            try coordinator.send(action(1, 1), to: id)
            let again = try Self.await(coordinator, heartbeating: 1, at: 2) {
                if case .ack(let ack) = $0, ack.sequence == 1 { ack.results.first } else { nil }
            }
            return (ran, skipped, again)
        }
        _ = try await SnapshotTests.finish(worker, task)
        coordinator.close()

        #expect(ran.status == .ok && ran.readDigest == ReadDigest.of([checked]))
        #expect(ran.readDigest != ReadDigest.none && ran.readDigest != ReadDigest.skipped)
        #expect(skipped.status == .skipped && skipped.readDigest == ReadDigest.skipped)
        #expect(again == ran, "the duplicate is acknowledged from memory, with what it read then")
    }
}
