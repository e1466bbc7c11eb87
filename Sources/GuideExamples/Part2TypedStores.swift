import Flux

// Part 2 of docs/GUIDE.md: typed actions, typed stores, and the hub that runs them. The same store types run on a
// bus worker in part 3, unchanged.

// guide:begin shop-actions
/// The shop's action types: each names an action and the payload type that travels with it.
public enum Shop {
    /// A quantity of one SKU.
    public struct Line: Codable, Sendable, Hashable {
        public var sku: String
        public var quantity: Int
        public init(sku: String, quantity: Int) {
            self.sku = sku
            self.quantity = quantity
        }
    }

    public static let restock = ActionType<Line>("inventory.restock")
    public static let addToCart = ActionType<Line>("cart.add")
    /// Sent once the payment service has answered; a declined payment travels as the action's error.
    public static let checkout = ActionType<NoPayload>("cart.checkout")
}
// guide:end shop-actions

// guide:begin inventory-store
/// Units in stock, by SKU. Adding to the cart reserves stock, all or nothing.
public final class InventoryStore: Store {
    public static let name = "inventory"
    public static let handlers = Handlers<InventoryStore>()
        .on(Shop.restock) { store, action, _ in
            store.state[action.payload.sku, default: 0] += action.payload.quantity
        }
        .on(Shop.addToCart) { store, action, _ in
            let line = action.payload
            let available = store.state[line.sku, default: 0]
            guard available >= line.quantity else {
                throw ActionError("only \(available) of \(line.sku) in stock")
            }
            store.state[line.sku] = available - line.quantity
        }

    public var state: [String: Int] = [:]
    public init() {}
}
// guide:end inventory-store

// guide:begin cart-store
/// The customer's cart. It waits for the inventory, so it only ever holds reserved stock: when the
/// inventory refuses a line, the cart is skipped for that action.
public final class CartStore: Store {
    public struct State: Codable, Sendable, Hashable {
        public var lines: [String: Int] = [:]
        public var orders = 0
        public var declined: String?
        public init() {}
    }

    public static let name = "cart"
    public static let dependencies = [InventoryStore.name]
    public static let handlers = Handlers<CartStore>()
        .on(Shop.addToCart) { store, action, _ in
            store.state.lines[action.payload.sku, default: 0] += action.payload.quantity
        }
        .on(Shop.checkout) { store, action, _ in
            guard !store.state.lines.isEmpty else { throw ActionError("the cart is empty") }
            if let error = action.error {
                store.state.declined = error.message   // the payment failed: keep the lines
            } else {
                store.state.lines = [:]
                store.state.orders += 1
                store.state.declined = nil
            }
        }

    public var state = State()
    public init() {}
}
// guide:end cart-store

// guide:begin audit-store
/// Sees every action, whatever its name, and keeps the errors that actions carried.
public final class AuditStore: Store {
    public struct State: Codable, Sendable, Hashable {
        public var actions = 0
        public var errors: [String] = []
        public init() {}
    }

    public static let name = "audit"
    public static let handlers = Handlers<AuditStore>()
        .onAnyAction { store, action, _ in
            store.state.actions += 1
            if let error = action.error { store.state.errors.append("\(action.name): \(error.message)") }
        }

    public var state = State()
    public init() {}
}
// guide:end audit-store

// guide:begin cart-badge
/// A view model that shows the number of items in the cart. It observes the cart for as long as it lives.
public final class CartBadge {
    public private(set) var items = 0
    public private(set) var warning: String?
    public private(set) var updates = 0

    public init(hub: Hub) {
        hub.observe(CartStore.self, owner: self) { [weak self] cart, error in
            guard let self else { return }
            items = cart.state.lines.values.reduce(0, +)
            warning = error?.message
            updates += 1
        }
    }
}
// guide:end cart-badge

/// What ``hubExample()`` observed.
public struct HubExample: Sendable {
    public var registrationError: String
    public var firstReport: DispatchReport
    public var stockAfterFirst: [String: Int]
    public var badgeItems: Int?
    public var badgeWarning: String?
    public var warningAfterCheckout: String?
    public var finalWarning: String?
    public var badgeUpdates: Int
    public var observersWithBadge: Int
    public var observersWithoutBadge: Int
    public var failedReport: DispatchReport
    public var cartAfterFailure: CartStore.State
    public var declinedReport: DispatchReport
    public var cart: CartStore.State
    public var audit: AuditStore.State
    public var emptyCheckout: DispatchReport
}

/// The shop's three stores under one hub: registration, dispatch and reports, an observer, a failure.
public func hubExample() throws -> HubExample {
    // guide:begin hub-register
    let hub = Hub()
    try hub.register([InventoryStore.self, CartStore.self, AuditStore.self])   // all or none, any order
    let inventory = hub.store(of: InventoryStore.self)!                     // the hub owns the instances
    let cart = hub.store(of: CartStore.self)!

    // The graph is checked here, not mid-dispatch: a cart without an inventory is refused.
    var registrationError = ""
    do {
        try Hub().register(CartStore.self)
    } catch {
        registrationError = error.description
        // "store `cart` waits for `inventory`, which is not registered; register it first or correct the name"
    }
    // guide:end hub-register

    // guide:begin hub-dispatch
    try hub.dispatch(Action(Shop.restock, .init(sku: "apple", quantity: 5)))
    try hub.dispatch(Action(Shop.restock, .init(sku: "pear", quantity: 1)))
    let report = try hub.dispatch(Action(Shop.addToCart, .init(sku: "apple", quantity: 2)))
    // report.description == "#3 cart.add: inventory ok, cart ok, audit ok"
    // report.succeeded == true, report["cart"] == .ok
    // inventory.state == ["apple": 3, "pear": 1], cart.state.lines == ["apple": 2]
    // guide:end hub-dispatch
    let stockAfterFirst = inventory.state

    // guide:begin hub-observe
    var badge: CartBadge? = CartBadge(hub: hub)
    try hub.dispatch(Action(Shop.addToCart, .init(sku: "apple", quantity: 1)))
    let items = badge?.items                                 // 3
    let observing = hub.observerCount(for: CartStore.self)   // 1
    badge = nil                                              // the observer goes with its owner
    let afterwards = hub.observerCount(for: CartStore.self)  // 0, and nobody had to unregister
    // guide:end hub-observe

    // guide:begin hub-failure
    let watcher = CartBadge(hub: hub)   // a new badge, to watch what follows
    let failed = try hub.dispatch(Action(Shop.addToCart, .init(sku: "pear", quantity: 3)))
    // failed.succeeded == false; failed.description ==
    // "#5 cart.add: inventory failed (only 1 of pear in stock),
    //  cart skipped (waits for `inventory`, which failed), audit ok"
    // cart.state.lines == ["apple": 3]: a skipped store is untouched, and its observers hear nothing
    // guide:end hub-failure
    let cartAfterFailure = cart.state
    let updatesAfterFailure = watcher.updates

    // guide:begin hub-action-error
    let declined = try hub.dispatch(Action(Shop.checkout, error: ActionError("card declined")))
    // declined.succeeded == true: the cart handled the error, kept its lines, and its observers heard it:
    // watcher.warning == "card declined"
    // guide:end hub-action-error
    let warningAfterDecline = watcher.warning
    // guide:begin hub-checkout
    try hub.dispatch(Action(Shop.checkout))
    // cart.state.lines == [:], cart.state.orders == 1, watcher.warning == nil
    // hub.store(of: AuditStore.self)!.state.errors == ["cart.checkout: card declined"]
    // guide:end hub-checkout
    let warningAfterCheckout = watcher.warning

    // guide:begin hub-failed-observer
    let empty = try hub.dispatch(Action(Shop.checkout))
    // empty.description == "#8 cart.checkout: cart failed (the cart is empty), audit ok"
    // watcher.warning == "the cart is empty": a failed store's observers hear the error its handler threw
    // guide:end hub-failed-observer
    let finalWarning = watcher.warning

    return HubExample(
        registrationError: registrationError, firstReport: report, stockAfterFirst: stockAfterFirst,
        badgeItems: items, badgeWarning: warningAfterDecline, warningAfterCheckout: warningAfterCheckout, finalWarning: finalWarning, badgeUpdates: updatesAfterFailure,
        observersWithBadge: observing, observersWithoutBadge: afterwards, failedReport: failed,
        cartAfterFailure: cartAfterFailure, declinedReport: declined, cart: cart.state,
        audit: hub.store(of: AuditStore.self)!.state, emptyCheckout: empty)
}
