import Flux
import FluxBus
import FluxBusProtocol
import Foundation
import Logging
import ServiceLifecycle
import ZeroMQ

// Part 3 of docs/GUIDE.md: the stores of part 2, unchanged, on a bus worker in this process.

/// What ``busExample(logger:)`` observed.
public struct BusExample: Sendable {
    /// Each action's outcomes under the hub, as `store status message` lines.
    public var inProcess: [[String]]
    /// The same, from the bus's results.
    public var onTheBus: [[String]]
    public var hubCart: CartStore.State
    public var busCart: CartStore.State
    public var hubInventory: [String: Int]
    public var busInventory: [String: Int]
    public var replicaWorker: String
    public var replicaSequence: UInt64
    public var digestMatches: Bool
    /// The batch of restocks: its first sequence, its size, its failures, and the pears in stock after it.
    public var batchFirst: UInt64
    public var batchCount: UInt32
    public var batchFailures: Int
    public var pearsAfterBatch: Int
}

/// The part 2 stores under a hub and on one worker, fed the same actions.
public func busExample(logger: Logger) async throws -> BusExample {
    // guide:begin bus-start
    let context = try ZMQContext()   // inproc:// endpoints live in one context: share it
    let control = "inproc://shop-control"
    let coordinator = Coordinator(
        configuration: .init(controlEndpoint: control, publishEndpoint: "inproc://shop-publish"),
        context: context, logger: logger)
    let worker = Worker(
        configuration: .init(id: "shop-1", coordinator: control, stores: [
            HostedStore(InventoryStore.self), HostedStore(CartStore.self), HostedStore(AuditStore.self),
        ]),
        context: context, logger: logger)
    let services = ServiceGroup(services: [coordinator, worker], logger: logger)
    let running = Task { try await services.run() }

    let client = try await BusClient(endpoint: control, context: context)
    try await client.waitUntilLive(["shop-1"])
    // guide:end bus-start

    // guide:begin bus-dispatch
    let hub = Hub()
    try hub.register([InventoryStore.self, CartStore.self, AuditStore.self])
    var inProcess: [[String]] = []
    var onTheBus: [[String]] = []
    func dispatch<Payload>(_ action: Action<Payload>) async throws {
        let report = try hub.dispatch(action)            // in process
        let result = try await client.dispatch(action)   // on the bus: the payload travels as JSON
        inProcess.append(report.outcomes.map { outcome in
            switch outcome.status {
            case .ok: "\(outcome.store) ok"
            case .failed(let message): "\(outcome.store) failed: \(message)"
            case .skipped(let reason): "\(outcome.store) skipped: \(reason)"
            }
        })
        onTheBus.append(result.stores.map { store in
            store.status == .ok ? "\(store.name) ok" : "\(store.name) \(store.status): \(store.error ?? "")"
        })
    }
    try await dispatch(Action(Shop.restock, .init(sku: "apple", quantity: 5)))
    try await dispatch(Action(Shop.addToCart, .init(sku: "apple", quantity: 2)))
    try await dispatch(Action(Shop.addToCart, .init(sku: "pear", quantity: 1)))   // none in stock
    try await dispatch(Action(Shop.checkout, error: ActionError("card declined")))
    // inProcess == onTheBus; the third is
    // ["inventory failed: only 0 of pear in stock",
    //  "cart skipped: waits for `inventory`, which failed", "audit ok"]
    // guide:end bus-dispatch

    // guide:begin bus-state
    let replica = try await client.state(of: CartStore.name)
    let busCart = try JSONDecoder().decode(CartStore.State.self, from: Data(replica.state))
    // busCart == hub.store(of: CartStore.self)!.state: lines ["apple": 2], declined "card declined"
    // replica.worker == "shop-1", replica.sequence == 4: the state as of the fourth dispatch
    // guide:end bus-state
    let inventoryReplica = try await client.state(of: InventoryStore.name)
    let busInventory = try JSONDecoder().decode([String: Int].self, from: Data(inventoryReplica.state))

    // guide:begin bus-batch
    let restocks = try (1...3).map { _ in try BatchAction(Action(Shop.restock, .init(sku: "pear", quantity: 2))) }
    let batch = try await client.dispatchBatch(restocks)
    // batch.firstSequence == 5, batch.count == 3, batch.failures == []: three dispatches, #5 to #7, one request
    // guide:end bus-batch
    let pears = try JSONDecoder().decode([String: Int].self, from: Data(try await client.state(of: InventoryStore.name).state))["pear"]

    // guide:begin bus-stop
    await client.close()
    await services.triggerGracefulShutdown()   // in reverse order: the worker says goodbye, then the coordinator stops
    try await running.value
    context.shutdown()
    // guide:end bus-stop

    return BusExample(
        inProcess: inProcess, onTheBus: onTheBus, hubCart: hub.store(of: CartStore.self)!.state, busCart: busCart,
        hubInventory: hub.store(of: InventoryStore.self)!.state, busInventory: busInventory,
        replicaWorker: replica.worker, replicaSequence: replica.sequence,
        digestMatches: StateDigest.fnv1a64(replica.state) == replica.digest,
        batchFirst: batch.firstSequence, batchCount: batch.count, batchFailures: batch.failures.count, pearsAfterBatch: pears ?? 0)
}
