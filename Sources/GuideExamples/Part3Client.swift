import Flux
import FluxBus
import FluxBusProtocol
import ZeroMQ

// Part 3 of docs/GUIDE.md, "A client program": the typed client API against a running bus.

// guide:begin client-retry
/// Dispatches `action`, sending it again while its outcome is unknown. The one request id makes that safe: the
/// coordinator applies an action at most once per id, and answers a repeat with the first result.
public func dispatchWithRetries<Payload>(
    _ action: Action<Payload>, requestID: String, client: BusClient, attempts: Int = 3
) async throws -> DispatchResult {
    for _ in 1..<attempts {
        do {
            return try await client.dispatch(action, requestID: requestID)
        } catch let error as BusError where error.code == .unreachable {
            continue   // no answer in time, or the coordinator stopped: the outcome is unknown, so ask again
        }
    }
    return try await client.dispatch(action, requestID: requestID)
}
// guide:end client-retry

/// What ``clientExample(endpoint:context:)`` saw.
public struct ClientExample: Sendable {
    public var firstSequence: UInt64
    public var repeatSequence: UInt64
    public var inventory: [String: Int]
    public var cartLines: [String: Int]
}

/// A client of its own against a bus whose worker hosts the shop's stores at `endpoint`.
public func clientExample(endpoint: String, context: ZMQContext) async throws -> ClientExample {
    // guide:begin client-connect
    let client = try await BusClient(endpoint: endpoint, context: context, timeout: .seconds(5))
    try await client.waitUntilLive(stores: [InventoryStore.name, CartStore.name])
    // guide:end client-connect

    // guide:begin client-dispatch
    let restock = Action(Shop.restock, .init(sku: "apple", quantity: 5))
    let requestID = "restock-apple-0001"   // one id per intended action, kept until it is answered
    let first = try await dispatchWithRetries(restock, requestID: requestID, client: client)
    let repeated = try await client.dispatch(restock, requestID: requestID)
    // repeated.sequence == first.sequence: answered from the log, not applied again
    try await client.dispatch(Action(Shop.addToCart, .init(sku: "apple", quantity: 2)))
    // guide:end client-dispatch

    // guide:begin client-state
    let inventory = try await client.state(of: InventoryStore.self)   // InventoryStore.State, decoded
    let cart = try await client.state(of: CartStore.self, timeout: .seconds(1))
    // inventory == ["apple": 3]: restocked once, though sent twice; cart.lines == ["apple": 2]
    await client.close()
    // guide:end client-state
    return ClientExample(
        firstSequence: first.sequence, repeatSequence: repeated.sequence, inventory: inventory, cartLines: cart.lines)
}
