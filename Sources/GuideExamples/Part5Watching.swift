import Flux
import FluxBus
import Foundation
import Logging
import ServiceLifecycle
import ZeroMQ

// Part 5 of docs/GUIDE.md, "Watching state": a client that follows the cart change by change, and the worker that
// hosts it reading its own replica.

/// What ``watchingExample(logger:)`` observed.
public struct WatchingExample: Sendable {
    /// Each element the watcher read: `#SEQ KIND lines orders`.
    public var changes: [String]
    /// The worker's own replica of the cart, and the sequence it is at.
    public var localSequence: UInt64
    public var localCart: CartStore.State
    /// The cart as `state(of:)` reads it from the bus.
    public var busCart: CartStore.State
}

// guide:begin watching-follow
/// A UI's loop: redraw the cart on every change, and say so when changes went by unseen.
public func followCart(_ client: BusClient, redraw: (CartStore.State) -> Void) async throws {
    for try await change in client.watch(CartStore.self) {
        if change.isResynchronized {
            print("the cart fell behind the coordinator's log: showing it as at #\(change.sequence)")
        }
        redraw(change.state)
    }
}
// guide:end watching-follow

/// One worker hosting the shop, a client watching its cart through four dispatches.
public func watchingExample(logger: Logger) async throws -> WatchingExample {
    let context = try ZMQContext()
    let control = "inproc://watching-control"
    let coordinator = Coordinator(
        configuration: .init(controlEndpoint: control, publishEndpoint: "inproc://watching-publish"),
        context: context, logger: logger)
    let worker = Worker(
        configuration: .init(id: "shop-1", coordinator: control, stores: [HostedStore(InventoryStore.self), HostedStore(CartStore.self)]),
        context: context, logger: logger)
    let services = ServiceGroup(services: [coordinator, worker], logger: logger)
    let running = Task { try await services.run() }
    let client = try await BusClient(endpoint: control, context: context)
    try await client.waitUntilLive(["shop-1"])
    func describe(_ change: StateChange<CartStore.State>) -> String {
        "#\(change.sequence) \(change.kind) \(change.state.lines) \(change.state.orders)"
    }

    // guide:begin watching-changes
    var changes = client.watch(CartStore.self).makeAsyncIterator()
    let first = try await changes.next()!   // #0, initial: an empty cart
    _ = try await client.dispatch(Action(Shop.restock, .init(sku: "apple", quantity: 5)))    // #1: no cart
    _ = try await client.dispatch(Action(Shop.addToCart, .init(sku: "apple", quantity: 2)))  // #2
    _ = try await client.dispatch(Action(Shop.addToCart, .init(sku: "pear", quantity: 1)))   // #3: cart skipped
    _ = try await client.dispatch(Action(Shop.checkout))                                      // #4
    let second = try await changes.next()!  // #2, changed: ["apple": 2]
    let third = try await changes.next()!   // #4, changed: no lines, 1 order
    // guide:end watching-changes

    // guide:begin watching-local
    let (sequence, cart) = try await worker.state(of: CartStore.self)   // 4, and the same cart as `third`
    // guide:end watching-local
    let busCart = try await client.state(of: CartStore.self)

    await client.close()
    await services.triggerGracefulShutdown()
    try await running.value
    context.shutdown()
    return WatchingExample(
        changes: [first, second, third].map(describe), localSequence: sequence, localCart: cart, busCart: busCart)
}
