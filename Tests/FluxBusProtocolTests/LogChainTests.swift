import FluxBusProtocol
import Testing

/// The test vectors of docs/PROTOCOL.md, appendix D: a worker in another language computes the same values.
@Suite("The log chain and request fingerprints")
struct LogChainTests {
    @Test func theChainMatchesTheDocumentedVectors() {
        let first = LogChain.next(after: 0, sequence: 1, actionType: "counter.add", payload: Array(#"{"by":1}"#.utf8), error: nil)
        #expect(first == 0xA392_13A3_3515_F896)
        let second = LogChain.next(
            after: first, sequence: 2, actionType: "kv.set", payload: Array(#"{"key":"a","value":1}"#.utf8), error: "boom")
        #expect(second == 0x41C8_6250_9CB1_78EC)
    }

    @Test func theChainCoversEveryField() {
        let base = LogChain.next(after: 7, sequence: 3, actionType: "a", payload: [1], error: nil)
        #expect(LogChain.next(after: 8, sequence: 3, actionType: "a", payload: [1], error: nil) != base)
        #expect(LogChain.next(after: 7, sequence: 4, actionType: "a", payload: [1], error: nil) != base)
        #expect(LogChain.next(after: 7, sequence: 3, actionType: "b", payload: [1], error: nil) != base)
        #expect(LogChain.next(after: 7, sequence: 3, actionType: "a", payload: [2], error: nil) != base)
        #expect(LogChain.next(after: 7, sequence: 3, actionType: "a", payload: [1], error: "") != base)
    }

    @Test func aFingerprintMatchesTheDocumentedVectorAndTellsRequestsApart() {
        let one = BatchAction(actionType: "counter.add", payload: Array(#"{"by":1}"#.utf8))
        #expect(RequestFingerprint.of([one]) == 0xD2A7_B039_7BD8_4EAE)
        #expect(RequestFingerprint.of([one, one]) != RequestFingerprint.of([one]))
        #expect(RequestFingerprint.of([BatchAction(actionType: "kv.set", payload: one.payload)]) != RequestFingerprint.of([one]))
    }
}
