/// The bookkeeping of one registered callback. `mark` records how far it got in the current pass, which spares
/// resetting every slot at the start of each dispatch: a mark from an older pass means "not started".
///
/// It lives outside the generic `Dispatcher` on purpose: nested in it, it would be a generic type whose metadata
/// the runtime looks up on every dispatch.
@usableFromInline struct DispatcherSlot {
    /// Set in `mark` when the callback is unregistered during a dispatch; the slot is removed when the dispatch ends.
    /// Marks count passes (2 per pass) and never come near it. Kept in the mark rather than beside it, a vacant slot
    /// that has not started compares above every pass, so the dispatch loop skips it with its one comparison.
    @usableFromInline static let vacant: UInt64 = 1 << 63

    @usableFromInline let number: Int
    @usableFromInline var mark: UInt64 = 0

    @usableFromInline init(number: Int) { self.number = number }

    /// The mark without the vacant bit: how far the callback got.
    @inlinable var progress: UInt64 { mark & ~Self.vacant }
    @inlinable var isVacant: Bool { mark & Self.vacant != 0 }
}

/// The dispatcher's slots in registration order, in memory the table owns.
///
/// A dispatch writes two marks per callback. In an array each write checks uniqueness and bounds; here, through the
/// addressors, it is one store. Callers keep indices below `count`, which the dispatcher guarantees by reading slots
/// only at indices it took from this table during the same dispatch (nothing is removed until a dispatch ends).
///
/// Its two properties skip Swift's dynamic exclusivity checks, which callgrind showed were a third of the work a
/// dispatch adds to its callbacks (four checks, about 300 instructions, per dispatch): every access is one statement
/// that calls nothing, so no two can overlap, and the table is confined to its dispatcher's isolation domain.
@usableFromInline final class SlotTable {
    @exclusivity(unchecked) @usableFromInline private(set) var base: UnsafeMutablePointer<DispatcherSlot>
    @exclusivity(unchecked) @usableFromInline private(set) var count = 0
    private var capacity: Int

    @usableFromInline init() {
        capacity = 16
        base = .allocate(capacity: capacity)
    }

    deinit { base.deallocate() }

    @inlinable subscript(index: Int) -> DispatcherSlot {
        unsafeAddress { UnsafePointer(base + index) }
        unsafeMutableAddress { base + index }
    }

    @usableFromInline func append(_ slot: DispatcherSlot) {
        if count == capacity {
            let grown = UnsafeMutablePointer<DispatcherSlot>.allocate(capacity: capacity * 2)
            grown.moveInitialize(from: base, count: count)
            base.deallocate()
            base = grown
            capacity *= 2
        }
        (base + count).initialize(to: slot)
        count += 1
    }

    @usableFromInline func remove(at index: Int) {
        precondition(index >= 0 && index < count, "slot index out of range")
        // Slots are trivial values, so the removed one needs no deinitialising, and `moveInitialize` allows the
        // overlapping ranges of a shift to the left.
        (base + index).moveInitialize(from: base + index + 1, count: count - index - 1)
        count -= 1
    }

    /// Finds a registration number's slot. Numbers ascend from the first slot's with gaps only where a callback was
    /// unregistered, so without gaps a number's slot is `number − first` and one comparison finds it; otherwise the
    /// ascending numbers are bisected.
    @inlinable func index(of number: Int) -> Int? {
        guard count > 0 else { return nil }
        let direct = number &- base[0].number
        if direct >= 0, direct < count, base[direct].number == number { return direct }
        var low = 0
        var high = count
        while low < high {
            let middle = (low &+ high) / 2
            let candidate = base[middle].number
            if candidate == number { return middle }
            if candidate < number { low = middle &+ 1 } else { high = middle }
        }
        return nil
    }
}
