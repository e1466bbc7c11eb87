import Flux
import FluxBusProtocol
import Testing

@testable import FluxBus

/// The stores a restarted coordinator's log remembers (their declarations, as their replicas last joined with them)
/// stay in its membership with no replica until their workers return, so that plans still name them.
@Suite("Stores remembered from the log")
struct RememberedStoresTests {
    static let counter = StoreDeclaration(name: "counter", handlesAll: false, handles: ["counter.add"])
    static let audit = StoreDeclaration(name: "audit", dependsOn: ["counter"], handlesAll: true)

    static func hello(_ worker: String, _ stores: [StoreDeclaration]) -> Message.Hello {
        Message.Hello(workerID: worker, instance: 1, stores: stores)
    }

    static func join(_ membership: inout Membership, _ worker: String, _ stores: [StoreDeclaration]) throws {
        try membership.join(hello(worker, stores), routingID: Array(worker.utf8), now: MonotonicTime(nanoseconds: 0))
    }

    @Test func rememberedStoresAreActiveWithNoReplica() {
        var membership = Membership(topology: nil)
        #expect(membership.remember([Self.counter, Self.audit]).isEmpty)
        #expect(membership.graph.order == ["counter", "audit"])
        #expect(membership.stores["counter"]?.handles("counter.add") == true)
        #expect(membership.stores["audit"]?.replicas == [])
        #expect(membership.liveReplicas(of: "counter").isEmpty)
    }

    @Test func anotherWorkersJoinDoesNotForgetThem() throws {
        var membership = Membership(topology: nil)
        _ = membership.remember([Self.counter])
        try Self.join(&membership, "w9", [StoreDeclaration(name: "kv", handlesAll: false, handles: ["kv.set"])])
        #expect(membership.stores["counter"] != nil, "a remembered store stays though nobody hosts it yet")
        #expect(Set(membership.graph.order) == ["counter", "kv"])
    }

    @Test func itsFirstReplicaBringsTheDeclarationThatCounts() throws {
        var membership = Membership(topology: nil)
        _ = membership.remember([Self.counter])
        // The worker was upgraded while the coordinator was down: it handles one more type now.
        let upgraded = StoreDeclaration(name: "counter", handlesAll: false, handles: ["counter.add", "counter.reset"])
        try Self.join(&membership, "w1", [upgraded])
        #expect(membership.stores["counter"]?.handles("counter.reset") == true)
        #expect(membership.stores["counter"]?.replicas == ["w1"])
        // From then on every replica must declare it alike, as always.
        #expect(throws: Membership.Refusal.self) { try Self.join(&membership, "w2", [Self.counter]) }
        // And it is an ordinary store: one its only worker no longer declares is forgotten.
        try Self.join(&membership, "w1", [StoreDeclaration(name: "kv", handlesAll: true)])
        #expect(membership.stores["counter"] == nil)
    }

    @Test func oneThatWouldCloseACycleIsLeftOut() throws {
        var membership = Membership(topology: nil)
        try Self.join(&membership, "w1", [StoreDeclaration(name: "counter", dependsOn: ["audit"], handlesAll: true)])
        #expect(membership.remember([Self.audit]) == ["audit"])
        #expect(membership.stores["audit"] == nil)
    }

    @Test func oneTheTopologyDoesNotPinIsLeftOut() {
        var membership = Membership(topology: Topology(stores: [.init(name: "counter")]))
        #expect(membership.remember([Self.counter, Self.audit]) == ["audit"])
        #expect(membership.graph.order == ["counter"])
    }
}
