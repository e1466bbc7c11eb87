/// The bookkeeping of one registered callback. `mark` records how far it got in the current pass, which spares
/// resetting every slot at the start of each dispatch: a mark from an older pass means "not started".
///
/// It lives outside the generic `Dispatcher` on purpose: nested in it, it would be a generic type whose metadata
/// the runtime looks up on every dispatch.
@usableFromInline struct DispatcherSlot {
    @usableFromInline let number: Int
    @usableFromInline var mark: UInt64 = 0
    /// Unregistered during the current dispatch; the slot is removed when the dispatch ends.
    @usableFromInline var isVacant = false

    @usableFromInline init(number: Int) { self.number = number }
}

/// The dispatcher's slots in registration order, in memory the table owns.
///
/// A dispatch writes two marks per callback. In an array each write checks uniqueness and bounds; here it is a plain
/// store. Callers keep indices below `count`, which the dispatcher guarantees by reading slots only at indices it
/// took from this table during the same dispatch (nothing is removed until a dispatch ends).
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
        get { base[index] }
        set { base[index] = newValue }
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

    /// Finds a registration number's slot by bisecting the ascending numbers.
    @usableFromInline func index(of number: Int) -> Int? {
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
