import Flux
import FluxBusProtocol
import Testing

@testable import FluxBus

/// The worker's cache of its last prepared plan: a reused preparation must be the one a fresh derivation would give,
/// for the stores that run here at that sequence.
@Suite("Worker plan cache: reused only for the same plan and the same stores here")
struct PlanCacheTests {
    /// `country` ← `city` ← `price`, and `weather` alone.
    static let plan = [
        PlanStep(store: "country"), PlanStep(store: "city", waitsFor: ["country"]),
        PlanStep(store: "price", waitsFor: ["city"]), PlanStep(store: "weather"),
    ]

    /// What running `prepared` hands out, each store succeeding, once the coordinator released `country`'s outcome.
    static func firstRunnable(_ prepared: PreparedPlan) -> [String] {
        var execution = prepared.execution
        if !prepared.local.contains("country") { execution.record("country", .ok) }
        if prepared.releasedHere.contains("country") { execution.record(PreparedPlan.released("country"), .ok) }
        var stores: [String] = []
        while let ready = execution.nextRunnable() {
            stores.append(ready.store)
            execution.record(ready.store, .ok)
        }
        return stores
    }

    static func expectSame(_ cached: PreparedPlan, as fresh: PreparedPlan) {
        #expect(cached.local == fresh.local)
        #expect(cached.releasedHere == fresh.releasedHere)
        #expect(cached.execution.plan == fresh.execution.plan)
        #expect(firstRunnable(cached) == firstRunnable(fresh))
    }

    @Test func aRepeatedPlanIsPreparedAsAFreshDerivationWouldBe() {
        var cache = PlanCache()
        let hosted: (String) -> Bool = { $0 == "city" || $0 == "price" }
        let first = cache.prepared(Self.plan, hosted: hosted)
        // An equal plan in another array, as separately decoded ACTIONs bring it.
        let again = cache.prepared(Self.plan.map { $0 }, hosted: hosted)
        Self.expectSame(first, as: PreparedPlan(Self.plan, hosted: hosted))
        Self.expectSame(again, as: PreparedPlan(Self.plan, hosted: hosted))
        #expect(again.local == ["city", "price"])
        #expect(again.releasedHere == ["city"], "price waits for city's released outcome, though city runs here")
        #expect(Self.firstRunnable(again) == ["city"], "price waits for the coordinator's word on city")
        #expect(Self.firstRunnable(cache.prepared(Self.plan, hosted: { _ in true })) == ["country", "city", "weather"])
    }

    @Test func anotherSetOfStoresHereOrAnotherPlanIsDerivedAfresh() {
        var cache = PlanCache()
        _ = cache.prepared(Self.plan, hosted: { _ in true })
        // A snapshot brought `country` past this sequence: it no longer runs here.
        let withoutCountry: (String) -> Bool = { $0 != "country" }
        let afterSnapshot = cache.prepared(Self.plan, hosted: withoutCountry)
        Self.expectSame(afterSnapshot, as: PreparedPlan(Self.plan, hosted: withoutCountry))
        #expect(afterSnapshot.local == ["city", "price", "weather"])
        let shorter = Array(Self.plan.prefix(2))
        let other = cache.prepared(shorter, hosted: withoutCountry)
        Self.expectSame(other, as: PreparedPlan(shorter, hosted: withoutCountry))
        #expect(other.local == ["city"])
    }

    @Test func aPlanOfMoreThan64StepsIsDerivedEveryTime() {
        var cache = PlanCache()
        let long = (0..<70).map { PlanStep(store: "s\($0)", waitsFor: $0 == 0 ? [] : ["s\($0 - 1)"]) }
        let hosted: (String) -> Bool = { $0 == "s0" || $0 == "s69" }
        let prepared = cache.prepared(long, hosted: hosted)
        Self.expectSame(prepared, as: PreparedPlan(long, hosted: hosted))
        #expect(prepared.local == ["s0", "s69"])
        let fewer = cache.prepared(long, hosted: { $0 == "s0" })
        #expect(fewer.local == ["s0"])
    }
}
