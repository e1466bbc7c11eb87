/// The simulator's agenda: events ordered by time, and by the order they were scheduled among equal times, so a run
/// is a pure function of its seed. A binary heap.
struct EventQueue<Event> {
    private struct Entry {
        let time: Int64
        let order: UInt64
        let event: Event
        func precedes(_ other: Entry) -> Bool { time != other.time ? time < other.time : order < other.order }
    }

    private var heap: [Entry] = []
    private var scheduled: UInt64 = 0

    var isEmpty: Bool { heap.isEmpty }
    var count: Int { heap.count }

    mutating func schedule(_ event: Event, at time: Int64) {
        scheduled += 1
        heap.append(Entry(time: time, order: scheduled, event: event))
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].precedes(heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    mutating func next() -> (time: Int64, event: Event)? {
        guard !heap.isEmpty else { return nil }
        heap.swapAt(0, heap.count - 1)
        let first = heap.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1, right = left + 1
            var smallest = parent
            if left < heap.count, heap[left].precedes(heap[smallest]) { smallest = left }
            if right < heap.count, heap[right].precedes(heap[smallest]) { smallest = right }
            guard smallest != parent else { break }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
        return (first.time, first.event)
    }
}
