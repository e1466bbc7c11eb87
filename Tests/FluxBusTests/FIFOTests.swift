import Testing

@testable import FluxBus

/// `FIFO` drops popped elements from its storage only now and then (past 1024 of them): reading and changing by
/// offset must count from the oldest element still waiting, before that compaction and after it.
@Suite("A first-in, first-out queue read by offset")
struct FIFOTests {
    @Test func offsetsCountFromTheOldestWaitingAcrossCompaction() {
        var queue = FIFO<Int>()
        for value in 0..<3_000 { queue.push(value) }
        for popped in [10, 2_000] {
            while queue.count > 3_000 - popped { _ = queue.pop() }
            #expect(queue.read(at: 0) { $0 } == popped)
            #expect(queue.read(at: 2_999 - popped) { $0 } == 2_999)
            #expect(queue.read(at: 3_000 - popped) { $0 } == nil, "past the newest")
            #expect(queue.read(at: -1) { $0 } == nil)
            queue.update(at: 1) { $0 = -$0 }
            #expect(queue.read(at: 1) { $0 } == -(popped + 1))
            #expect(Array(queue.elements.prefix(2)) == [popped, -(popped + 1)])
        }
    }

    @Test func anEmptyQueueHasNothingToRead() {
        var queue = FIFO<String>()
        #expect(queue.read(at: 0) { $0 } == nil)
        queue.push("a")
        _ = queue.pop()
        #expect(queue.read(at: 0) { $0.count } == nil)
        #expect(queue.isEmpty)
    }
}
