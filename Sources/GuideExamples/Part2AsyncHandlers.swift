import Flux

// Part 2 of docs/GUIDE.md, "Async handlers": a handler that awaits a service before it changes its store.

// guide:begin async-store
/// Somewhere to ask for a price: a service a handler awaits.
public protocol PriceService: Sendable {
    func price(of sku: String) async throws -> Int
}

/// Prices quoted for SKUs, asked of the price service as each quote is requested.
public final class QuoteStore: Store {
    public static let request = ActionType<Shop.Line>("quote.request")

    public static let name = "quotes"
    public static let handlers = Handlers<QuoteStore>()
        .on(request) { store, action, _ in
            // The handler awaits; the next store, and the next dispatch, wait for it.
            let unit = try await store.service.price(of: action.payload.sku)
            store.state[action.payload.sku] = unit * action.payload.quantity
        }

    /// SKU → the quoted total.
    public var state: [String: Int] = [:]
    var service: any PriceService = FixedPrices()
    public init() {}
}
// guide:end async-store

/// A price list in memory, for the example.
public struct FixedPrices: PriceService {
    public init() {}
    public func price(of sku: String) async throws -> Int {
        guard let price = ["apple": 3, "pear": 4][sku] else { throw ActionError("no price for \(sku)") }
        return price
    }
}

/// What the async handler example shows.
public struct AsyncHandlerExample: Sendable {
    public var quoted: DispatchReport
    public var refusal: String
    public var failed: DispatchReport
    public var quotes: [String: Int]
}

/// A store with an async handler under a hub: awaited with `dispatchAndWait`, refused by the synchronous dispatch.
public func asyncHandlerExample() async throws -> AsyncHandlerExample {
    // guide:begin async-dispatch
    let hub = Hub()
    try hub.register(QuoteStore.self)
    let quoted = try await hub.dispatchAndWait(Action(QuoteStore.request, .init(sku: "apple", quantity: 2)))
    // quoted.description == "#1 quote.request: quotes ok"; quotes.state == ["apple": 6]

    var refusal = ""
    do {
        try hub.dispatch(Action(QuoteStore.request, .init(sku: "pear", quantity: 1)))
    } catch {
        refusal = "\(error)"   // "store `quotes`'s handler for `quote.request` is async: a synchronous dispatch
                               //  cannot run it; dispatch with `try await hub.dispatchAndWait(action)`"
    }
    let failed = try await hub.dispatchAndWait(Action(QuoteStore.request, .init(sku: "plum", quantity: 1)))
    // failed.description == "#2 quote.request: quotes failed (no price for plum)"
    // guide:end async-dispatch
    return AsyncHandlerExample(
        quoted: quoted, refusal: refusal, failed: failed, quotes: hub.store(of: QuoteStore.self)!.state)
}
