import Flux

// Part 6 of docs/GUIDE.md: the cart as a Redux store.

// guide:begin redux-cart
public struct CartState: Equatable, Sendable {
    public var lines: [String: Int] = [:]
    public var coupon: String?
    public init() {}
}

public enum CartAction: ReduxAction, Equatable {
    case add(sku: String, quantity: Int)
    case remove(sku: String)
    case applyCoupon(String)
}

public struct CartRuleError: Error, Equatable {
    public let message: String
}

/// A pure function of the state and an action. It returns the state unchanged for actions it does not
/// know, and throws to refuse one.
public func cartReducer(_ state: CartState, _ action: any ReduxAction) throws -> CartState {
    var state = state
    switch action as? CartAction {
    case .add(let sku, let quantity):
        guard quantity > 0 else { throw CartRuleError(message: "quantity must be positive, not \(quantity)") }
        state.lines[sku, default: 0] += quantity
    case .remove(let sku):
        state.lines[sku] = nil
    case .applyCoupon(let code):
        state.coupon = code
    case nil:
        break
    }
    return state
}
// guide:end redux-cart

/// What ``reduxSubscribeExample()`` observed.
public struct ReduxSubscribeExample: Equatable, Sendable {
    public var changes: [String]
    public var lines: [String: Int]
    public var subscribersAfterCancel: Int
    public var subscribersAfterDrop: Int
}

public func reduxSubscribeExample() throws -> ReduxSubscribeExample {
    // guide:begin redux-subscribe
    let store = ReduxStore(state: CartState(), reducer: cartReducer)
    var changes: [String] = []
    let subscription = store.subscribe { old, new in
        changes.append("\(old.lines.count) -> \(new.lines.count) lines")
    }
    try store.dispatch(CartAction.add(sku: "apple", quantity: 2))
    try store.dispatch(CartAction.add(sku: "pear", quantity: 1))
    subscription.cancel()
    try store.dispatch(CartAction.remove(sku: "apple"))
    // changes == ["0 -> 1 lines", "1 -> 2 lines"]: nothing after the cancel
    // store.state.lines == ["pear": 1]
    // guide:end redux-subscribe
    let afterCancel = store.subscriberCount

    // guide:begin redux-subscription-lifetime
    var kept: Subscription? = store.subscribe { _, _ in }
    // store.subscriberCount == 1
    kept = nil   // a Subscription that is deallocated ends too: keep it as long as you listen
    // store.subscriberCount == 0
    // guide:end redux-subscription-lifetime
    _ = kept

    return ReduxSubscribeExample(
        changes: changes, lines: store.state.lines, subscribersAfterCancel: afterCancel,
        subscribersAfterDrop: store.subscriberCount)
}

/// What ``reduxMiddlewareExample()`` observed.
public struct ReduxMiddlewareExample: Equatable, Sendable {
    public var trace: [String]
    public var lines: [String: Int]
}

public func reduxMiddlewareExample() throws -> ReduxMiddlewareExample {
    // guide:begin redux-middleware
    var trace: [String] = []
    let logger = Middleware<CartState> { store, action, next in
        trace.append("log: \(action)")
        try next(action)
        trace.append("log: now \(store.getState().lines)")
    }
    /// No line above 10: the middleware rewrites the action before the reducer sees it.
    let limit = Middleware<CartState> { _, action, next in
        if case .add(let sku, let quantity) = action as? CartAction, quantity > 10 {
            trace.append("limit: \(quantity) -> 10")
            try next(CartAction.add(sku: sku, quantity: 10))
        } else {
            try next(action)
        }
    }
    let store = ReduxStore(state: CartState(), reducer: cartReducer, middleware: [logger, limit])
    try store.dispatch(CartAction.add(sku: "apple", quantity: 12))
    // trace == [
    //     #"log: add(sku: "apple", quantity: 12)"#,   // the first middleware is the outermost: it sees the
    //     "limit: 12 -> 10",                          // action first, and the new state last
    //     #"log: now ["apple": 10]"#,
    // ]
    // guide:end redux-middleware
    return ReduxMiddlewareExample(trace: trace, lines: store.state.lines)
}

/// What ``reduxThunkExample()`` observed.
public struct ReduxThunkExample: Equatable, Sendable {
    public var lines: [String: Int]
    public var coupon: String?
    public var withoutMiddleware: String
}

// guide:begin redux-coupons
/// A remote coupon service; any async API will do.
public actor CouponService {
    private let valid: Set<String>
    public init(valid: Set<String>) { self.valid = valid }
    public func validate(_ code: String) async throws -> Bool {
        try await Task.sleep(for: .milliseconds(1))   // a round trip
        return valid.contains(code)
    }
}
// guide:end redux-coupons

public func reduxThunkExample() async throws -> ReduxThunkExample {
    // guide:begin redux-thunk
    let store = ReduxStore(state: CartState(), reducer: cartReducer, middleware: [.thunk])

    /// Adds one of a SKU, unless the cart holds some already.
    func addOnce(_ sku: String) -> Thunk<CartState> {
        Thunk { dispatch, getState in
            if getState().lines[sku] == nil { try dispatch(CartAction.add(sku: sku, quantity: 1)) }
        }
    }
    try store.dispatch(addOnce("apple"))
    try store.dispatch(addOnce("apple"))
    // store.state.lines == ["apple": 1]
    // guide:end redux-thunk

    // guide:begin redux-async-thunk
    let coupons = CouponService(valid: ["SAVE10"])
    /// Applies a coupon once the service has accepted it, and only to a cart with something in it.
    func apply(_ code: String) -> AsyncThunk<CartState> {
        AsyncThunk { dispatch, getState in
            guard !getState().lines.isEmpty, try await coupons.validate(code) else { return }
            try dispatch(CartAction.applyCoupon(code))
        }
    }
    try await store.dispatch(apply("FREE"))     // refused by the service: nothing happens
    try await store.dispatch(apply("SAVE10"))
    // store.state.coupon == "SAVE10"
    // guide:end redux-async-thunk

    // guide:begin redux-thunk-without-middleware
    let plain = ReduxStore(state: CartState(), reducer: cartReducer)   // no .thunk
    var refusal = ""
    do {
        try plain.dispatch(addOnce("apple"))
    } catch let error as ReduxError {
        refusal = error.message   // "a Thunk reached the reducer: add Middleware.thunk to the store's middleware list"
    }
    // guide:end redux-thunk-without-middleware

    return ReduxThunkExample(lines: store.state.lines, coupon: store.state.coupon, withoutMiddleware: refusal)
}

/// What ``reduxRulesExample()`` observed.
public struct ReduxRulesExample: Equatable, Sendable {
    public var quietNotifications: Int
    public var loudNotifications: Int
    public var impureError: String
    public var impureState: Int
    public var refusedMessage: String
    public var linesAfterRefusal: [String: Int]
    public var history: [String]
    public var coupon: String?
}

public func reduxRulesExample() throws -> ReduxRulesExample {
    // guide:begin redux-skip-repeats
    let quiet = ReduxStore(state: CartState(), reducer: cartReducer)
    let loud = ReduxStore(state: CartState(), reducer: cartReducer, skipRepeats: false)
    var heard = (quiet: 0, loud: 0)
    let subscriptions = [
        quiet.subscribe { _, _ in heard.quiet += 1 },
        loud.subscribe { _, _ in heard.loud += 1 },
    ]
    for store in [quiet, loud] {
        try store.dispatch(CartAction.applyCoupon("SAVE10"))
        try store.dispatch(CartAction.applyCoupon("SAVE10"))   // the same state again
    }
    // heard.quiet == 1: an equal Equatable state notifies nobody; heard.loud == 2
    // guide:end redux-skip-repeats
    _ = subscriptions

    // guide:begin redux-reducer-dispatches
    var impure: ReduxStore<Int>?
    impure = ReduxStore(state: 0, reducer: { count, _ in
        try impure?.dispatch(CartAction.remove(sku: "apple"))   // a reducer must be pure
        return count + 1
    })
    var impureError = ""
    do {
        try impure?.dispatch(CartAction.remove(sku: "pear"))
    } catch let error as ReduxError where error.code == .dispatchFromReducer {
        impureError = error.message
        // "a reducer may not dispatch: reducers must be pure functions of state and action; dispatch from a
        // middleware, a thunk or a subscriber instead"
    }
    // impure!.state == 0: the throw left the state as it was
    // guide:end redux-reducer-dispatches
    let impureState = impure!.state
    impure = nil   // breaks the cycle between the store and its reducer

    // guide:begin redux-reducer-throws
    let store = ReduxStore(state: CartState(), reducer: cartReducer)
    var refused = ""
    do {
        try store.dispatch(CartAction.add(sku: "apple", quantity: 0))
    } catch let error as CartRuleError {
        refused = error.message   // "quantity must be positive, not 0"
    }
    try store.dispatch(CartAction.add(sku: "apple", quantity: 1))   // the store goes on as before
    // store.state.lines == ["apple": 1]
    // guide:end redux-reducer-throws
    let linesAfterRefusal = store.state.lines

    // guide:begin redux-subscriber-dispatches
    let cart = ReduxStore(state: CartState(), reducer: cartReducer)
    // A welcome coupon for every cart that stops being empty.
    let welcome = cart.subscribe { [unowned cart] old, new in
        if old.lines.isEmpty, !new.lines.isEmpty, new.coupon == nil {
            try? cart.dispatch(CartAction.applyCoupon("WELCOME"))   // queued, not reduced yet
        }
    }
    var history: [String] = []
    let recorder = cart.subscribe { old, new in
        history.append("\(old.lines.count) lines, \(old.coupon ?? "no coupon") -> "
            + "\(new.lines.count) lines, \(new.coupon ?? "no coupon")")
    }
    try cart.dispatch(CartAction.add(sku: "apple", quantity: 1))
    // history == ["0 lines, no coupon -> 1 lines, no coupon", "1 lines, no coupon -> 1 lines, WELCOME"]:
    // the recorder heard of the first change before the coupon was applied, so each old is the last new
    // guide:end redux-subscriber-dispatches
    _ = (welcome, recorder)

    return ReduxRulesExample(
        quietNotifications: heard.quiet, loudNotifications: heard.loud, impureError: impureError,
        impureState: impureState, refusedMessage: refused, linesAfterRefusal: linesAfterRefusal, history: history,
        coupon: cart.state.coupon)
}
