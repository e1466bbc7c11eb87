import Testing

@testable import FluxBus

/// How the coordinator names a routing id in its log (`origin`) and its messages.
@Suite("Routing ids as text")
struct RoutingIDTextTests {
    @Test func printableIDsReadAsThemselvesAndOthersInHexWithoutLeadingZeros() {
        #expect(CoordinatorEngine.describe(Array("w1".utf8)) == "w1")
        // libzmq's made-up ids: a zero byte, then four random ones.
        #expect(CoordinatorEngine.describe([0x00, 0x6B, 0x8B, 0x45, 0x07]) == "06b8b457")
        #expect(CoordinatorEngine.describe([0x7F, 0x20]) == "7f20")
        #expect(CoordinatorEngine.describe([]) == "")
    }
}
