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
    @usableFromInline typealias Callback = (Payload) throws -> Void

    /// One registered callback. `mark` records how far it got in the current pass, which spares resetting every
    /// slot at the start of each dispatch: a mark from an older pass means "not started".
    @usableFromInline struct Slot {
        @usableFromInline let number: Int
        @usableFromInline var callback: Callback?
        @usableFromInline var mark: UInt64

        @usableFromInline init(number: Int, callback: @escaping Callback) {
            self.number = number
            self.callback = callback
            self.mark = 0
        }
    }

    /// Slots in registration order, so numbers ascend and lookups can bisect. A callback unregistered mid-dispatch
    /// leaves its slot with a nil callback until the dispatch ends, which keeps indices stable while callbacks run.
    @usableFromInline var slots: ContiguousArray<Slot> = []
    @usableFromInline var lastNumber = 0
    /// Pass `p` marks a slot `2p` when its callback starts and `2p + 1` when it returns.
    @usableFromInline var pass: UInt64 = 0
    @usableFromInline var pendingPayload: Payload?
    @usableFromInline var dispatching = false
    @usableFromInline var hasVacantSlots = false

    /// Creates a dispatcher with no callbacks.
    public init() {}

    /// Registers a callback to be invoked with every dispatched payload.
    /// - Returns: a token for ``waitFor(_:)`` and ``unregister(_:)``.
    @discardableResult
    public func register(_ callback: @escaping (Payload) throws -> Void) -> DispatchToken {
        lastNumber += 1
        slots.append(Slot(number: lastNumber, callback: callback))
        return DispatchToken(number: lastNumber)
    }

    /// Removes a callback. During a dispatch, a callback that has not run yet will not run.
    /// - Throws: ``FluxError/unknownToken(_:)`` when the token maps to no registered callback.
    public func unregister(_ token: DispatchToken) throws {
        guard let index = index(of: token), slots[index].callback != nil else {
            throw FluxError.unknownToken(token)
        }
        if dispatching {
            slots[index].callback = nil
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
        // Callbacks registered during this pass sit beyond `count`; they run only if someone waits for them.
        let count = slots.count
        var index = 0
        while index < count {
            if slots[index].mark < started, let callback = slots[index].callback {
                try invoke(callback, at: index, payload)
            }
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
        for token in tokens {
            guard let index = index(of: token) else { throw FluxError.unknownToken(token) }
            let mark = slots[index].mark
            if mark >= started {
                guard mark == started &+ 1 else { throw FluxError.circularDependency(token) }
                continue
            }
            guard let callback = slots[index].callback else { throw FluxError.unknownToken(token) }
            try invoke(callback, at: index, payload)
        }
    }

    /// Runs one slot's callback, marking it started before and finished after. Slot indices stay valid across the
    /// call: a callback may append slots, but nothing is removed until the dispatch ends.
    @inlinable
    func invoke(_ callback: Callback, at index: Int, _ payload: Payload) throws {
        let started = 2 &* pass
        slots[index].mark = started
        try callback(payload)
        slots[index].mark = started &+ 1
    }

    @usableFromInline
    func stopDispatching() {
        dispatching = false
        pendingPayload = nil
        if hasVacantSlots {
            slots.removeAll { $0.callback == nil }
            hasVacantSlots = false
        }
    }

    /// Finds a token's slot by bisecting the ascending slot numbers.
    @usableFromInline
    func index(of token: DispatchToken) -> Int? {
        guard let number = token.number else { return nil }
        var low = 0
        var high = slots.count
        while low < high {
            let middle = (low &+ high) / 2
            let candidate = slots[middle].number
            if candidate == number { return middle }
            if candidate < number { low = middle &+ 1 } else { high = middle }
        }
        return nil
    }
}
