/// One registered callback and its bookkeeping. `mark` records how far the callback got in the current pass, which
/// spares resetting every slot at the start of each dispatch: a mark from an older pass means "not started".
///
/// The callback is kept in its slot, so the dispatch loop reads one table. The type is generic, but every path a
/// dispatch takes is inlinable and so specialised for the payload, where its layout is known and no metadata is looked
/// up (it was, per dispatch, when unspecialised code handled a generic slot).
@usableFromInline struct DispatcherSlot<Payload> {
    /// Set in `mark` when the callback is unregistered during a dispatch; the slot is removed when the dispatch ends.
    /// Marks count passes (2 per pass) and never come near it. Kept in the mark rather than beside it, a vacant slot
    /// that has not started compares above every pass, so the dispatch loop skips it with its one comparison.
    @inlinable static var vacant: UInt64 { 1 << 63 }

    @usableFromInline let number: Int
    @usableFromInline var mark: UInt64 = 0
    /// A struct field rather than an array element, so the closure keeps the abstraction of `register`'s parameter;
    /// stored bare in an array it would be re-abstracted once more, and each call would pass through one more thunk.
    @usableFromInline let callback: (Payload) throws -> Void

    @inlinable init(number: Int, callback: @escaping (Payload) throws -> Void) {
        self.number = number
        self.callback = callback
    }

    /// The mark without the vacant bit: how far the callback got.
    @inlinable var progress: UInt64 { mark & ~Self.vacant }
    @inlinable var isVacant: Bool { mark & Self.vacant != 0 }
}

/// The dispatcher's slots in registration order, in memory the table owns.
///
/// A dispatch writes two marks per callback. In an array each write checks uniqueness and bounds; here, through the
/// addressors, it is one store, and a callback is read with no bounds check. Callers keep indices below `count`,
/// which the dispatcher guarantees by reading slots only at indices it took from this table during the same dispatch
/// (nothing is removed until a dispatch ends; a slot appended meanwhile may move the others, so none is held across a
/// callback).
///
/// Its two properties skip Swift's dynamic exclusivity checks, which callgrind showed were a third of the work a
/// dispatch adds to its callbacks (four checks, about 300 instructions, per dispatch): every access is one statement
/// that calls nothing, so no two can overlap, and the table is confined to its dispatcher's isolation domain.
@usableFromInline final class SlotTable<Payload> {
    @usableFromInline typealias Slot = DispatcherSlot<Payload>

    @exclusivity(unchecked) @usableFromInline private(set) var base: UnsafeMutablePointer<Slot>
    @exclusivity(unchecked) @usableFromInline private(set) var count = 0
    private var capacity: Int

    @usableFromInline init() {
        capacity = 16
        base = .allocate(capacity: capacity)
    }

    deinit {
        base.deinitialize(count: count)
        base.deallocate()
    }

    @inlinable subscript(index: Int) -> Slot {
        unsafeAddress { UnsafePointer(base + index) }
        unsafeMutableAddress { base + index }
    }

    @usableFromInline func append(_ slot: Slot) {
        if count == capacity {
            let grown = UnsafeMutablePointer<Slot>.allocate(capacity: capacity * 2)
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
        (base + index).deinitialize(count: 1)
        // `moveInitialize` allows the overlapping ranges of a shift to the left.
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
