import Flux
import FluxBus
import FluxBusProtocol
import FluxBusTools
import Foundation
import Logging
import ServiceLifecycle
import ZeroMQ

// Part 5 of docs/GUIDE.md: one store on several workers, the digests that prove they agree, and a store that
// cannot agree with itself.

// guide:begin receipt-stores
/// Numbers each successful checkout from the dispatch's sequence: every replica computes the same receipt.
public final class ReceiptStore: Store {
    public static let name = "receipts"
    public static let handlers = Handlers<ReceiptStore>()
        .on(Shop.checkout) { store, action, context in
            guard action.error == nil else { return }
            store.state.append("R-\(context.sequence)")
        }

    public var state: [String] = []
    public init() {}
}

/// Don't do this: each replica draws its own random receipt number, so no two replicas agree.
public final class RandomReceiptStore: Store {
    public static let name = "receipts-random"
    public static let handlers = Handlers<RandomReceiptStore>()
        .on(Shop.checkout) { store, action, _ in
            guard action.error == nil else { return }
            store.state.append("R-\(UUID().uuidString)")
        }

    public var state: [String] = []
    public init() {}
}
// guide:end receipt-stores

/// What ``replicasExample(logger:)`` observed.
public struct ReplicasExample: Sendable {
    /// The checkout's outcomes: `store@worker status`, and the digests per store.
    public var checkoutOutcomes: [String]
    public var checkoutStores: [String]
    public var checkoutDigests: [String: Set<UInt64>]
    public var checkoutSequence: UInt64
    public var divergedAt: [String: UInt64]
    public var lateReplicaSequence: UInt64
    /// shop-c's replicas' digests in `status` right after it became live, before any live dispatch.
    public var lateDigestsBeforeLiveDispatch: [UInt64]
    public var statusText: String
    public var finalReplicas: [String: [String]]
    public var finalDigests: [String: Set<UInt64>]
    public var stateDigestMatches: Bool
    public var receipts: [String]
}

/// Two replicas of the shop, a divergent store, and a third replica that joins late.
public func replicasExample(logger: Logger) async throws -> ReplicasExample {
    // guide:begin replicas-start
    let context = try ZMQContext()
    let control = "inproc://replicas-control"
    let coordinator = Coordinator(
        configuration: .init(controlEndpoint: control, publishEndpoint: "inproc://replicas-publish"),
        context: context, logger: logger)
    func shop(_ id: String, _ stores: [any Store.Type]) -> Worker {
        Worker(
            configuration: .init(id: id, coordinator: control, stores: stores.map { HostedStore($0) }),
            context: context, logger: logger)
    }
    let shopStores: [any Store.Type] = [InventoryStore.self, CartStore.self, ReceiptStore.self]
    let services = ServiceGroup(services: [
        coordinator,
        shop("shop-a", shopStores + [RandomReceiptStore.self]),
        shop("shop-b", shopStores + [RandomReceiptStore.self]),
    ], logger: logger)
    let running = Task { try await services.run() }
    let client = try await BusClient(endpoint: control, context: context)
    try await client.waitUntilLive(["shop-a", "shop-b"])
    // guide:end replicas-start

    // guide:begin replicas-dispatch
    _ = try await client.dispatch(Action(Shop.restock, .init(sku: "apple", quantity: 5)))
    _ = try await client.dispatch(Action(Shop.addToCart, .init(sku: "apple", quantity: 2)))
    let checkout = try await client.dispatch(Action(Shop.checkout))
    // checkout.sequence == 3; checkout.stores.map { "\($0.name) \($0.replicas)" } ==
    //     ["cart 2", "receipts 2", "receipts-random 2"]: two replicas of each handled it
    let digests = Dictionary(grouping: checkout.outcomes, by: \.store).mapValues { Set($0.map(\.digest)) }
    // digests["cart"]!.count == 1, digests["receipts"]!.count == 1: the replicas agree
    // digests["receipts-random"]!.count == 2: they do not
    // guide:end replicas-dispatch

    // guide:begin replicas-status
    let status = try await client.status()
    let diverged = Dictionary(uniqueKeysWithValues: status.stores.map { ($0.name, $0.divergedAt) })
    // diverged == ["inventory": 0, "cart": 0, "receipts": 0, "receipts-random": 3]
    // `fluxbus status` prints "DIVERGED at #3" beside receipts-random
    // guide:end replicas-status
    let statusText = StatusView.text(status)

    // guide:begin replicas-late-join
    let late = shop("shop-c", shopStores)
    let lateTask = Task { try await late.run() }
    try await client.waitUntilLive(["shop-c"])   // it replayed #1 to #3 from the coordinator first
    let lateSequence = try await client.status().workers.first { $0.id == "shop-c" }!.lastApplied   // 3
    // guide:end replicas-late-join
    let digestsBeforeLive = try await client.status().stores.flatMap(\.replicas).filter { $0.worker == "shop-c" }.map(\.digest)
    // guide:begin replicas-late-dispatch
    _ = try await client.dispatch(Action(Shop.addToCart, .init(sku: "apple", quantity: 1)))
    _ = try await client.dispatch(Action(Shop.checkout))
    let replicas = try await client.status().stores.filter { $0.name != RandomReceiptStore.name }
    // inventory, cart and receipts: 3 replicas each, with one digest between them
    let receipts = try await client.state(of: ReceiptStore.name)
    // receipts.state is the JSON ["R-3","R-5"], and StateDigest.fnv1a64(receipts.state) == receipts.digest
    // guide:end replicas-late-dispatch

    let finalReplicas = Dictionary(uniqueKeysWithValues: replicas.map { store in
        (store.name, store.replicas.map { "\($0.worker)@\($0.lastApplied)" }.sorted())
    })
    let finalDigests = Dictionary(uniqueKeysWithValues: replicas.map { ($0.name, Set($0.replicas.map(\.digest))) })
    let receiptList = try JSONDecoder().decode([String].self, from: Data(receipts.state))

    // guide:begin replicas-stop
    await client.close()
    lateTask.cancel()                        // a worker outside the group: cancelling it stops it at once
    _ = await lateTask.result
    await services.triggerGracefulShutdown()
    try await running.value
    context.shutdown()
    // guide:end replicas-stop

    return ReplicasExample(
        checkoutOutcomes: checkout.outcomes.map { "\($0.store)@\($0.worker) \($0.status)" },
        checkoutStores: checkout.stores.map { "\($0.name) \($0.replicas)" },
        checkoutDigests: digests, checkoutSequence: checkout.sequence, divergedAt: diverged,
        lateReplicaSequence: lateSequence, lateDigestsBeforeLiveDispatch: digestsBeforeLive, statusText: statusText, finalReplicas: finalReplicas, finalDigests: finalDigests,
        stateDigestMatches: StateDigest.fnv1a64(receipts.state) == receipts.digest, receipts: receiptList)
}

// guide:begin digested-state
struct Inventory: Sendable, DigestedState {
    private(set) var stock: [String: Int] = [:]
    private var digest = MapDigest()

    init() {}

    subscript(sku: String) -> Int? {
        get { stock[sku] }
        set {
            if let old = stock[sku] { digest.remove(member: Self.member(sku, old)) }
            stock[sku] = newValue
            if let newValue { digest.insert(member: Self.member(sku, newValue)) }
        }
    }

    var stateDigest: UInt64 { digest.value }

    /// The member's bytes: any encoding works, as long as every replica of the store uses the same one.
    private static func member(_ sku: String, _ count: Int) -> [UInt8] { Array("\(sku)=\(count)".utf8) }
}

// On the wire it is the plain map; decoding rebuilds the digest, entry by entry.
extension Inventory: Codable {
    init(from decoder: any Decoder) throws {
        for (sku, count) in try decoder.singleValueContainer().decode([String: Int].self) { self[sku] = count }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(stock)
    }
}
// guide:end digested-state
