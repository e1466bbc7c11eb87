import Testing

@testable import FluxBus

/// The coordinator's worker ids by routing id: keyed by every byte, so ids that share a prefix stay apart.
@Suite("Coordinator routing table")
struct RoutingTableTests {
    @Test func idsThatShareBytesOrAPrefixAreDifferentKeys() {
        var table = RoutingTable()
        let ids: [[UInt8]] = [[], [0], [0, 0], Array("w1/5eed".utf8), Array("w1/5eed0".utf8), Array("w1/5eee".utf8)]
        for (index, id) in ids.enumerated() { table[id] = "worker-\(index)" }
        for (index, id) in ids.enumerated() { #expect(table[id] == "worker-\(index)") }
        table[Array("w1/5eed".utf8)] = nil
        #expect(table[Array("w1/5eed".utf8)] == nil)
        #expect(table[Array("w1/5eed0".utf8)] == "worker-4")
        #expect(table[Array("w2".utf8)] == nil)
    }
}
