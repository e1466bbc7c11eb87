import Flux
import Foundation
import FluxBusProtocol
import FluxStores
import Testing

@testable import FluxBus

@Suite("Failures: a throwing store skips its dependents, and the bus goes on", .timeLimit(.minutes(1)))
struct FailureTests {
    /// `check` throws on a non-positive quantity. `ledger` (another worker) waits for it and is skipped; `report`
    /// waits for `ledger` on ledger's own worker and is skipped too; `audit` waits for nothing and runs. The next
    /// action is clean, and the skipped stores' states did not move.
    @Test func aThrowingHandlerSkipsItsDependentsOnly() async throws {
        let bus = try await TestBus()
        let client = try await bus.client()
        bus.startWorker("w-check", [HostedStore(CheckStore.self)])
        bus.startWorker("w-books", [HostedStore(LedgerStore.self), HostedStore(ReportStore.self)])
        bus.startWorker("w-audit", [HostedStore(AuditStore.self)])
        try await bus.waitUntilLive(3, client: client)

        let good = try await client.dispatch(Action(Orders.place, .init(qty: 3)))
        #expect(good.succeeded)
        #expect(Set(good.stores.map(\.name)) == ["check", "ledger", "report", "audit"])

        let bad = try await client.dispatch(Action(Orders.place, .init(qty: -1)))
        #expect(!bad.succeeded)
        #expect(bad.sequence == good.sequence + 1)
        #expect(bad.store("check")?.status == .failed)
        #expect(bad.store("check")?.error == "quantity must be positive, got -1")
        #expect(bad.store("ledger")?.status == .skipped)
        #expect(bad.store("ledger")?.error == "waits for `check`, which failed")
        #expect(bad.store("report")?.status == .skipped)
        #expect(bad.store("report")?.error == "waits for `ledger`, which was skipped")
        #expect(bad.store("audit")?.status == .ok)
        #expect(bad.store("audit")?.error == nil)
        // A plan lists a store after the stores it waits for.
        let order = bad.stores.map(\.name)
        #expect(try #require(order.firstIndex(of: "check")) < #require(order.firstIndex(of: "ledger")))
        #expect(try #require(order.firstIndex(of: "ledger")) < #require(order.firstIndex(of: "report")))

        let next = try await client.dispatch(Action(Orders.place, .init(qty: 4)))
        #expect(next.succeeded)
        #expect(next.sequence == bad.sequence + 1)

        #expect(try decode(CheckStore.State.self, try await client.state(of: "check")) == .init(lastQty: 4))
        #expect(try decode(LedgerStore.State.self, try await client.state(of: "ledger")) == .init(total: 7, entries: 2))
        #expect(try decode(ReportStore.State.self, try await client.state(of: "report")) == .init(total: 7))
        #expect(try decode(AuditStore.State.self, try await client.state(of: "audit")) == .init(orders: 3))

        await client.close()
        await bus.stop()
    }

    /// A skipped store reports the digest of its unchanged state, so its replicas still agree.
    @Test func skippedReplicasReportTheirUnchangedDigest() async throws {
        let bus = try await TestBus()
        let client = try await bus.client()
        bus.startWorker("w-check", [HostedStore(CheckStore.self)])
        bus.startWorker("w-ledger-1", [HostedStore(LedgerStore.self)])
        bus.startWorker("w-ledger-2", [HostedStore(LedgerStore.self)])
        try await bus.waitUntilLive(3, client: client)

        let good = try await client.dispatch(Action(Orders.place, .init(qty: 5)))
        let ledgerDigest = StateDigest.fnv1a64(Array(try canonicalJSON(LedgerStore.State(total: 5, entries: 1)).utf8))
        #expect(good.outcomes(of: "ledger").map(\.digest) == [ledgerDigest, ledgerDigest])

        let bad = try await client.dispatch(Action(Orders.place, .init(qty: 0)))
        let skipped = bad.outcomes(of: "ledger")
        #expect(skipped.map(\.status) == [.skipped, .skipped])
        #expect(Set(skipped.map(\.worker)) == ["w-ledger-1", "w-ledger-2"])
        #expect(skipped.map(\.digest) == [ledgerDigest, ledgerDigest])
        // Both replicas answered; neither applied it.
        #expect(bad.store("ledger")?.replicas == 2)
        #expect(bad.store("ledger")?.applied == 0)
        #expect(bad.store("ledger")?.unknown == 0)

        let status = try await client.status()
        #expect(status.store("ledger")?.divergedAt == 0)
        await client.close()
        await bus.stop()
    }
}
