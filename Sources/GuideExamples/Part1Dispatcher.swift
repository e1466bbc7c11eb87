import Flux

// Part 1 of docs/GUIDE.md: Facebook's Flux dispatcher, as it is.

// guide:begin dispatcher-events
/// What happens in the shop. A `Dispatcher` broadcasts payloads of any one type; an enum is the usual choice.
public enum ShopEvent {
    case restocked(sku: String, quantity: Int)
    case addedToCart(sku: String, quantity: Int)
}
// guide:end dispatcher-events

/// What ``dispatcherExample()`` leaves behind.
public struct DispatcherExample: Equatable, Sendable {
    public var cartToken: DispatchToken
    public var stockToken: DispatchToken
    public var stock: [String: Int]
    public var cart: [String: Int]
    public var log: [String]
}

/// A stock callback and a cart callback that waits for it, through one dispatcher.
public func dispatcherExample() throws -> DispatcherExample {
    // guide:begin dispatcher-register
    let dispatcher = Dispatcher<ShopEvent>()
    var stock: [String: Int] = [:]
    var cart: [String: Int] = [:]
    var reserved = 0
    var log: [String] = []

    // The cart registers first, yet it must only take what the stock reserved for this very event:
    // it waits for the stock's callback, which then runs first.
    var stockToken: DispatchToken!
    let cartToken = dispatcher.register { event in
        guard case .addedToCart(let sku, _) = event else { return }
        try dispatcher.waitFor([stockToken])
        if reserved > 0 { cart[sku, default: 0] += reserved }
        log.append("cart: \(reserved) \(sku)")
    }
    stockToken = dispatcher.register { event in
        switch event {
        case .restocked(let sku, let quantity):
            stock[sku, default: 0] += quantity
        case .addedToCart(let sku, let quantity):
            reserved = min(quantity, stock[sku, default: 0])
            stock[sku, default: 0] -= reserved
            log.append("stock: reserved \(reserved) of \(quantity) \(sku)")
        }
    }
    // cartToken == "ID_1", stockToken == "ID_2"
    // guide:end dispatcher-register

    // guide:begin dispatcher-dispatch
    try dispatcher.dispatch(.restocked(sku: "apple", quantity: 3))
    try dispatcher.dispatch(.addedToCart(sku: "apple", quantity: 2))
    try dispatcher.dispatch(.addedToCart(sku: "apple", quantity: 5))   // only 1 left
    // stock == ["apple": 0], cart == ["apple": 3]
    // log == ["stock: reserved 2 of 2 apple", "cart: 2 apple",
    //         "stock: reserved 1 of 5 apple", "cart: 1 apple"]
    // guide:end dispatcher-dispatch
    return DispatcherExample(cartToken: cartToken, stockToken: stockToken, stock: stock, cart: cart, log: log)
}

/// What ``dispatcherRulesExample()`` observed.
public struct DispatcherRulesExample: Equatable, Sendable {
    public var messages: [String]
    public var restocks: Int
    public var isDispatchingAfterFailure: Bool
    public var loopTokens: [DispatchToken]
}

/// Every `FluxError`, each caught where it happens.
public func dispatcherRulesExample() throws -> DispatcherRulesExample {
    // guide:begin dispatcher-errors
    let dispatcher = Dispatcher<ShopEvent>()
    var messages: [String] = []
    func attempt(_ body: () throws -> Void) {
        do { try body() } catch { messages.append("\(error)") }   // FluxError carries Flux's own text
    }

    attempt { try dispatcher.waitFor(["ID_1"]) }     // not dispatching
    attempt { try dispatcher.unregister("ID_7") }    // no such token

    // A callback may not dispatch. If it catches the error, the outer dispatch goes on.
    var restocks = 0
    dispatcher.register { event in                   // ID_1
        guard case .restocked = event else { return }
        attempt { try dispatcher.dispatch(.addedToCart(sku: "apple", quantity: 1)) }
        restocks += 1
    }
    try dispatcher.dispatch(.restocked(sku: "apple", quantity: 1))   // restocks == 1

    // Two callbacks that wait for each other: the inner wait finds the outer one still running.
    var loop: [DispatchToken] = []
    loop.append(dispatcher.register { _ in try dispatcher.waitFor([loop[1]]) })   // ID_2
    loop.append(dispatcher.register { _ in try dispatcher.waitFor([loop[0]]) })   // ID_3
    attempt { try dispatcher.dispatch(.addedToCart(sku: "apple", quantity: 1)) }
    let stillDispatching = dispatcher.isDispatching  // false: a throw ends the dispatch cleanly

    // Unregister the pair, and the next dispatch is clean.
    try dispatcher.unregister(loop[0])
    try dispatcher.unregister(loop[1])
    try dispatcher.dispatch(.addedToCart(sku: "apple", quantity: 1))

    // messages == [
    //     "Must be invoked while dispatching.",
    //     "`ID_7` does not map to a registered callback.",
    //     "Cannot dispatch in the middle of a dispatch.",
    //     "Circular dependency detected while waiting for `ID_2`.",
    // ]
    // guide:end dispatcher-errors
    return DispatcherRulesExample(
        messages: messages, restocks: restocks, isDispatchingAfterFailure: stillDispatching, loopTokens: loop)
}
