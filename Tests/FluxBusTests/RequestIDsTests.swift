import FluxBusClient
import Foundation
import Testing

/// Default request ids: one UUID per process and a counter, never the same twice, from any number of threads.
@Suite("Default request ids")
struct RequestIDsTests {
    @Test func idsFromManyTasksAtOnceAreAllDifferentAndShareTheProcessUUID() async {
        let ids = await withTaskGroup(of: [String].self) { group in
            for _ in 0..<8 { group.addTask { (0..<10_000).map { _ in RequestIDs.next() } } }
            return await group.reduce(into: [String]()) { $0 += $1 }
        }
        #expect(ids.count == 80_000)
        #expect(Set(ids).count == ids.count)
        let prefixes = Set(ids.map { $0.prefix(36) })
        #expect(prefixes.count == 1)
        #expect(prefixes.first.flatMap { UUID(uuidString: String($0)) } != nil)
        #expect(ids.allSatisfy { UInt64($0.dropFirst(37)) != nil })
    }
}
