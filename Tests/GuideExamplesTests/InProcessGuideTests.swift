import Flux
import GuideExamples
import Testing

/// Parts 1, 2 and 6 of docs/GUIDE.md: each example runs, and ends as the guide's comments say.
@Suite("Guide, in process: the dispatcher, typed stores and the hub, Redux")
struct InProcessGuideTests {
    @Test("part 1: the cart waits for the stock, and takes only what was reserved")
    func dispatcher() throws {
        let example = try dispatcherExample()
        #expect(example.cartToken == "ID_1")
        #expect(example.stockToken == "ID_2")
        #expect(example.stock == ["apple": 0])
        #expect(example.cart == ["apple": 3])
        #expect(example.log == [
            "stock: reserved 2 of 2 apple", "cart: 2 apple",
            "stock: reserved 1 of 5 apple", "cart: 1 apple",
        ])
    }

    @Test("part 1: every FluxError, with Flux's text")
    func dispatcherRules() throws {
        let example = try dispatcherRulesExample()
        #expect(example.messages == [
            "Must be invoked while dispatching.",
            "`ID_7` does not map to a registered callback.",
            "Cannot dispatch in the middle of a dispatch.",
            "Circular dependency detected while waiting for `ID_2`.",
        ])
        #expect(example.messages == [
            FluxError.notDispatching, .unknownToken("ID_7"), .dispatchInProgress, .circularDependency("ID_2"),
        ].map(\.description))
        #expect(example.restocks == 1)
        #expect(example.isDispatchingAfterFailure == false)
        #expect(example.loopTokens == ["ID_2", "ID_3"])
    }

    @Test("part 2: registration, reports, an observer bound to its owner, a failure and an action's error")
    func hub() throws {
        let example = try hubExample()
        #expect(example.registrationError
            == "store `cart` waits for `inventory`, which is not registered; register it first or correct the name")
        #expect(example.firstReport.description == "#3 cart.add: inventory ok, cart ok, audit ok")
        #expect(example.firstReport.succeeded)
        #expect(example.firstReport["cart"] == .ok)
        #expect(example.stockAfterFirst == ["apple": 3, "pear": 1])

        #expect(example.badgeItems == 3)
        #expect(example.observersWithBadge == 1)
        #expect(example.observersWithoutBadge == 0)

        #expect(!example.failedReport.succeeded)
        #expect(example.failedReport.description == "#5 cart.add: inventory failed (only 1 of pear in stock), "
            + "cart skipped (waits for `inventory`, which failed), audit ok")
        #expect(example.cartAfterFailure.lines == ["apple": 3])
        #expect(example.badgeUpdates == 0, "a skipped store's observers hear nothing")

        #expect(example.declinedReport.succeeded)
        #expect(example.badgeWarning == "card declined")
        #expect(example.warningAfterCheckout == nil)
        #expect(example.finalWarning == "the cart is empty", "a failed store's observers hear its error")
        #expect(example.cart.lines.isEmpty)
        #expect(example.cart.orders == 1)
        #expect(example.cart.declined == nil)
        #expect(example.audit.errors == ["cart.checkout: card declined"])
        #expect(example.audit.actions == 8)
        #expect(example.emptyCheckout.description == "#8 cart.checkout: cart failed (the cart is empty), audit ok")
    }

    @Test("part 2: an async handler is awaited by dispatchAndWait and refused by the synchronous dispatch")
    func asyncHandler() async throws {
        let example = try await asyncHandlerExample()
        #expect(example.quoted.description == "#1 quote.request: quotes ok")
        #expect(example.refusal == "store `quotes`'s handler for `quote.request` is async: a synchronous dispatch "
            + "cannot run it; dispatch with `try await hub.dispatchAndWait(action)`")
        #expect(example.failed.description == "#2 quote.request: quotes failed (no price for plum)")
        #expect(example.quotes == ["apple": 6], "the refused dispatch ran nothing")
    }

    @Test("part 6: subscribe with old and new; a subscription ends when cancelled or dropped")
    func reduxSubscribe() throws {
        let example = try reduxSubscribeExample()
        #expect(example.changes == ["0 -> 1 lines", "1 -> 2 lines"])
        #expect(example.lines == ["pear": 1])
        #expect(example.subscribersAfterCancel == 0)
        #expect(example.subscribersAfterDrop == 0)
    }

    @Test("part 6: the first middleware is the outermost")
    func reduxMiddleware() throws {
        let example = try reduxMiddlewareExample()
        #expect(example.trace == [
            #"log: add(sku: "apple", quantity: 12)"#,
            "limit: 12 -> 10",
            #"log: now ["apple": 10]"#,
        ])
        #expect(example.lines == ["apple": 10])
    }

    @Test("part 6: thunks, async thunks, and a thunk without the middleware", .timeLimit(.minutes(1)))
    func reduxThunks() async throws {
        let example = try await reduxThunkExample()
        #expect(example.lines == ["apple": 1])
        #expect(example.coupon == "SAVE10")
        #expect(example.withoutMiddleware == "a Thunk reached the reducer: add Middleware.thunk to the store's middleware list")
    }

    @Test("part 6: skipRepeats, a reducer that dispatches or throws, a subscriber that dispatches")
    func reduxRules() throws {
        let example = try reduxRulesExample()
        #expect(example.quietNotifications == 1)
        #expect(example.loudNotifications == 2)
        #expect(example.impureError == "a reducer may not dispatch: reducers must be pure functions of state and action; "
            + "dispatch from a middleware, a thunk or a subscriber instead")
        #expect(example.impureState == 0)
        #expect(example.refusedMessage == "quantity must be positive, not 0")
        #expect(example.linesAfterRefusal == ["apple": 1])
        #expect(example.history == [
            "0 lines, no coupon -> 1 lines, no coupon",
            "1 lines, no coupon -> 1 lines, WELCOME",
        ])
        #expect(example.coupon == "WELCOME")
    }
}
