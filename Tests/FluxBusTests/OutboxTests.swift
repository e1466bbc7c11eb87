import FluxBusProtocol
import Testing

@testable import FluxBus

/// The outbox alone: what an engine held comes out per destination, in order, cut into BUNDLEs by count and size,
/// and a chunk of one goes as the message itself.
@Suite("Outbox: held messages become single sends and BUNDLEs, in order")
struct OutboxTests {
    let codec = Codec()

    static func heartbeat(_ sequence: UInt64) -> Message { .heartbeat(.init(epoch: 1, sequence: sequence)) }

    /// Every message the effects carry, unbundled, per destination in the order they come out.
    func unbundled(_ effects: [(String, Message)]) throws -> [String: [Message]] {
        var out: [String: [Message]] = [:]
        for (destination, message) in effects {
            out[destination, default: []] += try codec.decodeAll(codec.encode(message))
        }
        return out
    }

    @Test func countCutsBundlesAndALastChunkOfOneGoesAlone() throws {
        var outbox = Outbox<String>()
        let count = 2 * Outbox<String>.bundleCount + 1
        for sequence in 1...UInt64(count) { outbox.hold(Self.heartbeat(sequence), for: "a") }
        outbox.hold(Self.heartbeat(99), for: "b")
        let effects = outbox.release(codec: codec) { ($0, $1) }

        #expect(effects.map(\.0) == ["a", "a", "a", "b"])
        guard case .bundle(let first) = effects[0].1, case .bundle(let second) = effects[1].1 else {
            Issue.record("expected two BUNDLEs first, got \(effects.map(\.1.command))")
            return
        }
        #expect(first.messages.count == Outbox<String>.bundleCount)
        #expect(second.messages.count == Outbox<String>.bundleCount)
        #expect(effects[2].1 == Self.heartbeat(UInt64(count)))
        #expect(effects[3].1 == Self.heartbeat(99))
        #expect(try unbundled(effects)["a"] == (1...UInt64(count)).map(Self.heartbeat))
        #expect(outbox.count == 0)
    }

    @Test func sizeCutsBundlesBeforeTheyPassTheByteLimit() throws {
        var outbox = Outbox<String>()
        // Bodies of about a third of the limit: two fit in a BUNDLE, a third would pass it. Each of its own type, so
        // that none joins the one before it in a run.
        let payload = Array(repeating: UInt8(ascii: "x"), count: Outbox<String>.bundleBytes / 3)
        let messages = (1...5).map {
            Message.action(.init(epoch: 1, sequence: UInt64($0), actionType: "a\($0)", payload: payload, error: nil, plan: []))
        }
        for message in messages { outbox.hold(message, for: "a") }
        let effects = outbox.release(codec: codec) { ($0, $1) }

        let sizes = effects.map { effect -> Int in
            if case .bundle(let bundle) = effect.1 { return bundle.messages.count }
            return 1
        }
        #expect(sizes == [2, 2, 1])
        #expect(effects.last?.1 == messages.last)
        #expect(try unbundled(effects)["a"] == messages)
    }

    /// A batch's ACTIONs, ACKs and COMPLETEDs, alike but for a few fields, go as runs of at most a BUNDLE's count and
    /// about its size; anything between them, or unlike the one before, breaks the run; taken apart, they are the
    /// messages held, in order.
    @Test func alikeMessagesOfConsecutiveSequencesGoAsRuns() throws {
        var outbox = Outbox<String>()
        let count = Outbox<String>.bundleCount + 10
        let plan = [PlanStep(store: "counter")]
        var stream: [Message] = (1...UInt64(count)).map {
            .action(.init(epoch: 1, sequence: $0, actionType: "counter.add", payload: Array("\($0)".utf8), plan: plan))
        }
        stream.append(Self.heartbeat(5))
        stream += (1...3 as ClosedRange<UInt64>).map {
            .completed(.init(epoch: 1, sequence: $0, actionType: "counter.add", elapsedMicros: $0, outcomes: [
                .init(store: "counter", worker: "w1", status: $0 == 3 ? .failed : .ok, digest: $0),
            ]))
        }
        let acks: [Message] = (1...4 as ClosedRange<UInt64>).map {
            .ack(.init(epoch: 1, sequence: $0 == 4 ? 9 : $0, results: [.init(store: "counter", status: .ok, digest: $0)]))
        }
        for message in stream { outbox.hold(message, for: "stream") }
        for message in acks { outbox.hold(message, for: "coordinator") }
        let effects = outbox.release(codec: codec) { ($0, $1) }

        let sent = try effects.flatMap { destination, message -> [String] in
            let parts = if case .bundle(let bundle) = message {
                try bundle.messages.map { try codec.decode([Codec.signature, $0.body]) }
            } else {
                [message]
            }
            return parts.map { part in
                switch part {
                case .actions(let run): "\(destination) ACTIONS \(run.firstSequence)+\(run.entries.count)"
                case .acks(let run): "\(destination) ACKS \(run.firstSequence)+\(run.count)"
                case .completions(let run): "\(destination) COMPLETIONS \(run.firstSequence)+\(run.count)"
                default: "\(destination) \(part.command)"
                }
            }
        }
        #expect(sent == [
            "stream ACTIONS 1+\(Outbox<String>.bundleCount)", "stream ACTIONS \(Outbox<String>.bundleCount + 1)+10",
            "stream HEARTBEAT", "stream COMPLETIONS 1+2", "stream COMPLETED",
            "coordinator ACKS 1+3", "coordinator ACK",
        ])
        let taken = try unbundled(effects)
        #expect(taken["stream"] == stream)
        #expect(taken["coordinator"] == acks)
    }

    @Test func aLoneMessageIsSentAsItIsAndTheOutboxStartsEmptyAgain() {
        var outbox = Outbox<String>()
        outbox.hold(Self.heartbeat(1), for: "a")
        #expect(outbox.release(codec: codec) { $1 } == [Self.heartbeat(1)])
        #expect(outbox.release(codec: codec) { $1 }.isEmpty)
    }

    /// Few destinations are found by comparing them, many through an index: with the two interleaved, and a second
    /// burst after the first, every destination keeps its messages in order and comes out where it was first held.
    @Test(arguments: [3, 40])
    func interleavedDestinationsKeepTheirOrder(destinations: Int) throws {
        var outbox = Outbox<String>()
        for burst in 0..<2 {
            let names = (0..<destinations).map { "d\(($0 * 7 + burst) % destinations)" }
            for round in 1...3 as ClosedRange<UInt64> {
                for name in names { outbox.hold(Self.heartbeat(round), for: name) }
            }
            outbox.hold(Self.heartbeat(9), for: names[1])
            let effects = outbox.release(codec: codec) { ($0, $1) }

            #expect(effects.map(\.0) == names, "burst \(burst)")
            let messages = try unbundled(effects)
            for name in names {
                #expect(messages[name] == [1, 2, 3].map(Self.heartbeat) + (name == names[1] ? [Self.heartbeat(9)] : []))
            }
            #expect(outbox.count == 0)
        }
    }
}
