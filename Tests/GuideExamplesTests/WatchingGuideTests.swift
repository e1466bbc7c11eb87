import GuideExamples
import Logging
import Testing

/// Part 5 of docs/GUIDE.md, "Watching state": the watcher's elements and the worker's local replica.
@Suite("Guide: watching state", .timeLimit(.minutes(1)))
struct WatchingGuideTests {
    @Test("a watcher sees the cart once, then each change it ran ok, and ends where the worker's replica is")
    func watchingTheCart() async throws {
        let example = try await watchingExample(logger: BusGuideTests.logger())
        #expect(example.changes == [
            "#0 initial [:] 0",
            "#2 changed [\"apple\": 2] 0",
            "#4 changed [:] 1",
        ])
        #expect(example.localSequence == 4)
        #expect(example.localCart == example.busCart)
        #expect(example.localCart.orders == 1 && example.localCart.lines.isEmpty)
    }
}
