/// Facebook's Flux dispatcher: it broadcasts each payload to every registered callback, in registration order, and
/// lets a callback wait for others to finish first.
///
/// The semantics are Flux's, case for case:
/// - Callbacks run synchronously, in registration order, each exactly once per dispatch, all with the same payload.
/// - ``waitFor(_:)`` runs a callback that has not run yet, does nothing for one that already finished, and throws
///   ``FluxError/circularDependency(_:)`` for one that is still running.
/// - A callback that throws ends the dispatch: the rest are skipped and the next dispatch starts clean.
/// - A nested ``dispatch(_:)`` throws ``FluxError/dispatchInProgress`` before it changes anything.
/// - A callback registered during a dispatch runs in that pass only if another callback waits for it; one
///   unregistered during a dispatch before it ran is skipped.
///
/// Like Flux's own, the dispatcher is not thread-safe: keep it in one isolation domain.
///
/// ```swift
/// let dispatcher = Dispatcher<String>()
/// var log: [String] = []
/// let first = dispatcher.register { log.append("first saw \($0)") }
/// dispatcher.register { payload in
///     try dispatcher.waitFor([first])
///     log.append("second saw \(payload)")
/// }
/// try dispatcher.dispatch("hello")
/// ```
public final class Dispatcher<Payload> {
    // Exclusivity: the properties below are read and written on every dispatch, and Swift's dynamic exclusivity
    // checks on class properties would cost more than the callbacks themselves. They are safe to turn off because
    // no access outlives a single statement: a callback is copied out of its slot before it is called, and marks
    // are written before and after a call, never during it, so a callback that registers, unregisters or waits never
    // overlaps an access. The dispatcher is confined to one isolation domain, so no other thread can overlap one.

    /// The callbacks in registration order, so numbers ascend and lookups can bisect; indices stay stable during a
    /// dispatch because nothing is removed until it ends, and a callback registered meanwhile is appended.
    @usableFromInline let slots = SlotTable<Payload>()
    @exclusivity(unchecked) @usableFromInline var lastNumber = 0
    /// Pass `p` marks a slot `2p` when its callback starts and `2p + 1` when it returns (``DispatcherSlot/mark``).
    @exclusivity(unchecked) @usableFromInline var pass: UInt64 = 0
    @exclusivity(unchecked) @usableFromInline var pendingPayload: Payload?
    @exclusivity(unchecked) @usableFromInline var dispatching = false
    @exclusivity(unchecked) @usableFromInline var hasVacantSlots = false

    /// Creates a dispatcher with no callbacks.
    public init() {}

    /// Registers a callback to be invoked with every dispatched payload.
    /// - Returns: a token for ``waitFor(_:)`` and ``unregister(_:)``.
    @inlinable @discardableResult
    public func register(_ callback: @escaping (Payload) throws -> Void) -> DispatchToken {
        lastNumber += 1
        slots.append(DispatcherSlot(number: lastNumber, callback: callback))
        return DispatchToken(number: lastNumber)
    }

    /// Removes a callback. During a dispatch, a callback that has not run yet will not run.
    /// - Throws: ``FluxError/unknownToken(_:)`` when the token maps to no registered callback.
    public func unregister(_ token: DispatchToken) throws {
        guard let index = index(of: token), !slots[index].isVacant else {
            throw FluxError.unknownToken(token)
        }
        if dispatching {
            slots[index].mark |= DispatcherSlot<Payload>.vacant
            hasVacantSlots = true
        } else {
            slots.remove(at: index)
        }
    }

    /// Whether a dispatch is running.
    public var isDispatching: Bool { dispatching }

    /// Dispatches a payload to every registered callback.
    /// - Throws: ``FluxError/dispatchInProgress`` when called from inside a dispatch (nothing changes then), or
    ///   whatever a callback threw, which ends this dispatch.
    @inlinable
    public func dispatch(_ payload: Payload) throws {
        guard !dispatching else { throw FluxError.dispatchInProgress }
        pass &+= 1
        pendingPayload = payload
        dispatching = true
        defer { stopDispatching() }

        let started = 2 &* pass
        // Callbacks registered during this pass lie beyond `count`; they run only if someone waits for them.
        let count = slots.count
        var index = 0
        while index < count {
            // One comparison passes over callbacks that ran (waited for) and vacant slots, whose bit is above it.
            if slots[index].mark < started { try invoke(index, started: started, payload) }
            index &+= 1
        }
    }

    /// Waits for the callbacks behind `tokens` to finish for the current payload, running those that have not
    /// started yet. Tokens that already finished are passed over; duplicates and an empty list are fine.
    /// - Throws: ``FluxError/notDispatching`` outside a dispatch, ``FluxError/circularDependency(_:)`` for a
    ///   callback that is still running, ``FluxError/unknownToken(_:)`` for a token that maps to no callback.
    @inlinable
    public func waitFor(_ tokens: [DispatchToken]) throws {
        guard dispatching, let payload = pendingPayload else { throw FluxError.notDispatching }
        let started = 2 &* pass
        // By position rather than `for token in tokens`, which would copy each token and retain its text.
        for position in tokens.indices {
            guard let index = index(of: tokens[position]) else { throw FluxError.unknownToken(tokens[position]) }
            // Read in place: a copy of the slot would retain its callback.
            let progress = slots[index].progress
            if progress >= started {
                guard progress == started &+ 1 else { throw FluxError.circularDependency(tokens[position]) }
                continue
            }
            guard !slots[index].isVacant else { throw FluxError.unknownToken(tokens[position]) }
            try invoke(index, started: started, payload)
        }
    }

    /// Runs the callback at `index`, marking it started and then finished for the pass that started at `started`.
    @inlinable
    func invoke(_ index: Int, started: UInt64, _ payload: Payload) throws {
        slots[index].mark = started
        try slots[index].callback(payload)
        // `| 1` rather than `started + 1` keeps the vacant bit of a callback that unregistered itself while running.
        slots[index].mark |= 1
    }

    /// Ends a dispatch. Inlinable so that it is specialised with `dispatch`: clearing `pendingPayload` in unspecialised
    /// code would look up `Optional<Payload>`'s metadata on every dispatch.
    @inlinable
    func stopDispatching() {
        dispatching = false
        pendingPayload = nil
        if hasVacantSlots { removeVacantSlots() }
    }

    /// Drops the slots unregistered during the dispatch that just ended.
    @usableFromInline
    func removeVacantSlots() {
        for index in (0..<slots.count).reversed() where slots[index].isVacant {
            slots.remove(at: index)
        }
        hasVacantSlots = false
    }

    /// Finds a token's slot.
    @inlinable
    func index(of token: DispatchToken) -> Int? {
        token.number.flatMap(slots.index(of:))
    }
}
