import FluxBusProtocol
import Testing

/// A REPLAY's entries usually repeat their plan and outputs, and the reader shares the list it read last when the
/// bytes repeat. Whatever the entries, what it decodes must be what was encoded.
@Suite("Repeated plans and outputs in a REPLAY decode as encoded")
struct RepeatingListTests {
    let codec = Codec()

    static let counter = [PlanStep(store: "counter")]
    static let chain = [PlanStep(store: "a"), PlanStep(store: "b", waitsFor: ["a"])]
    /// Starts with `chain`'s bytes but for the count: a reader must not take it for `chain`.
    static let longer = chain + [PlanStep(store: "c", waitsFor: ["b"])]

    static func entry(_ sequence: UInt64, plan: [PlanStep], outputs: [StoreOutput]) -> ReplayEntry {
        ReplayEntry(epoch: 1, sequence: sequence, actionType: "t", payload: Array("{}".utf8), plan: plan, outputs: outputs)
    }

    @Test func plansAndOutputsThatRepeatAndChangeRoundTrip() throws {
        let ok = [StoreOutput(store: "counter", status: .ok)]
        let failed = [StoreOutput(store: "counter", status: .failed, message: "no")]
        let outputsOf = { (plan: [PlanStep]) in plan.map { StoreOutput(store: $0.store, status: .ok, output: [1, 2]) } }
        let entries = [
            Self.entry(1, plan: Self.counter, outputs: ok),
            Self.entry(2, plan: Self.counter, outputs: ok),
            Self.entry(3, plan: Self.counter, outputs: failed),
            Self.entry(4, plan: Self.chain, outputs: outputsOf(Self.chain)),
            Self.entry(5, plan: Self.longer, outputs: outputsOf(Self.longer)),
            Self.entry(6, plan: Self.chain, outputs: outputsOf(Self.chain)),
            Self.entry(7, plan: [], outputs: []),
            Self.entry(8, plan: Self.counter, outputs: ok),
        ]
        let replay = Message.replay(.init(epoch: 1, entries: entries))
        #expect(try codec.decode(codec.encode(replay)) == replay)
    }

    @Test func aRepeatedPlanCutShortStillFailsAsTruncated() throws {
        let replay = Message.replay(.init(epoch: 1, entries: [
            Self.entry(1, plan: Self.chain, outputs: []), Self.entry(2, plan: Self.chain, outputs: []),
        ]))
        var frames = codec.encode(replay)
        // Cut inside the second entry's plan: its bytes no longer repeat the first's in full.
        frames[1].removeLast(8)
        #expect(throws: DecodeError.self) { try codec.decode(frames) }
    }
}
