/// A first-in, first-out queue with O(1) amortised push and pop.
struct FIFO<Element> {
    private var storage: [Element] = []
    private var head = 0

    var count: Int { storage.count - head }
    var isEmpty: Bool { count == 0 }

    mutating func push(_ element: Element) { storage.append(element) }

    /// Changes the first element in place, if there is one.
    mutating func updateFirst(_ change: (inout Element) -> Void) { update(at: 0, change) }

    /// Changes the element `offset` places from the first in place, if there is one.
    @discardableResult
    mutating func update<Result>(at offset: Int, _ change: (inout Element) -> Result) -> Result? {
        guard offset >= 0, head + offset < storage.count else { return nil }
        return change(&storage[head + offset])
    }

    /// Reads a part of the element `offset` places from the first, in place; nil when there is none. Subscripting
    /// ``elements`` copies the whole element out, retaining and releasing each of its fields.
    func read<Part>(at offset: Int, _ part: (borrowing Element) -> Part) -> Part? {
        guard offset >= 0, head + offset < storage.count else { return nil }
        return part(storage[head + offset])
    }

    /// The elements waiting, oldest first.
    var elements: ArraySlice<Element> { storage[head...] }

    mutating func pop() -> Element? {
        guard head < storage.count else { return nil }
        let element = storage[head]
        head += 1
        if head > 1024 && head * 2 > storage.count {
            storage.removeFirst(head)
            head = 0
        }
        return element
    }
}
