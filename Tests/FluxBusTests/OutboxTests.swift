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
        // Bodies of about a third of the limit: two fit in a BUNDLE, a third would pass it.
        let payload = Array(repeating: UInt8(ascii: "x"), count: Outbox<String>.bundleBytes / 3)
        let messages = (1...5).map {
            Message.action(.init(epoch: 1, sequence: UInt64($0), actionType: "a", payload: payload, error: nil, plan: []))
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

    @Test func aLoneMessageIsSentAsItIsAndTheOutboxStartsEmptyAgain() {
        var outbox = Outbox<String>()
        outbox.hold(Self.heartbeat(1), for: "a")
        #expect(outbox.release(codec: codec) { $1 } == [Self.heartbeat(1)])
        #expect(outbox.release(codec: codec) { $1 }.isEmpty)
    }
}
