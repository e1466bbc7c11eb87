import FluxBusProtocol
import Testing

@testable import FluxBus

/// A request's ACTIONs joined as the coordinator makes them (`ActionRuns`) are what the outbox's joiner makes of the
/// same ACTIONs, run for run, within the same limits; and a receiver takes them apart into exactly those ACTIONs.
@Suite("ActionRuns: a request's ACTIONs joined as they are made")
struct ActionRunsTests {
    let codec = Codec()

    /// `count` consecutive ACTIONs from sequence 10 whose types (and so plans) follow `types`, with payloads of
    /// `payloadBytes`.
    static func actions(_ count: Int, types: (Int) -> String = { _ in "counter.add" }, payloadBytes: Int = 3) -> [Message.Action] {
        let plans = ["counter.add": [PlanStep(store: "counter")], "kv.set": [PlanStep(store: "kv"), PlanStep(store: "mirror", waitsFor: ["kv"])]]
        return (0..<count).map { index in
            let type = types(index)
            return Message.Action(
                epoch: 4, sequence: 10 + UInt64(index), actionType: type, payload: Array(repeating: UInt8(index % 251), count: payloadBytes),
                error: index % 7 == 3 ? "refused" : nil, plan: plans[type] ?? [], traceparent: "")
        }
    }

    static func joined(_ actions: [Message.Action]) -> [Message] {
        var runs = ActionRuns()
        var sent: [Message] = []
        for action in actions { runs.add(action) { sent.append($0) } }
        runs.finish { sent.append($0) }
        return sent
    }

    @Test("the same runs as the outbox's joiner", arguments: [
        ("one", 1, 3), ("two", 2, 3), ("a batch", 1_000, 3), ("past a bundle's count", 2_500, 3),
        ("past a bundle's bytes", 300, 2_000), ("types alternating", 40, 3), ("types in stretches", 500, 3),
    ])
    func sameRunsAsTheOutbox(_ shape: String, count: Int, payloadBytes: Int) throws {
        let types: (Int) -> String = switch shape {
        case "types alternating": { $0 % 2 == 0 ? "counter.add" : "kv.set" }
        case "types in stretches": { ($0 / 90) % 2 == 0 ? "counter.add" : "kv.set" }
        default: { _ in "counter.add" }
        }
        let actions = Self.actions(count, types: types, payloadBytes: payloadBytes)
        let ours = Self.joined(actions)
        let outboxes = MessageRuns.join(
            actions.map { .action($0) }, maxItems: Outbox<Int>.bundleCount, maxBytes: Outbox<Int>.bundleBytes)
        #expect(ours == outboxes)
        #expect(try ours.flatMap { try codec.decodeAll(codec.encode($0)) } == actions.map { .action($0) })
        if count > 1, shape != "types alternating" { #expect(ours.count < count) }
    }

    @Test func finishStartsEmptyAgain() {
        var runs = ActionRuns()
        var sent: [Command] = []
        for action in Self.actions(3) { runs.add(action) { sent.append($0.command) } }
        #expect(sent.isEmpty)
        runs.finish { sent.append($0.command) }
        #expect(sent == [.actions])
        runs.finish { sent.append($0.command) }
        #expect(sent == [.actions])
        runs.add(Self.actions(1)[0]) { sent.append($0.command) }
        runs.finish { sent.append($0.command) }
        #expect(sent == [.actions, .action])
    }
}
