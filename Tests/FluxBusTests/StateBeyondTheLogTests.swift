import FluxBusProtocol
import Logging
import Testing

@testable import FluxBus

/// A replica's state at a sequence beyond the coordinator's log holds an entry the log does not: one a power cut
/// lost after the replica ran it. The coordinator does not hand it to the client who asked (found by the simulator:
/// a client read a replica's ledger at a sequence whose entry a power cut had lost). The replica refuses to serve
/// such a state itself (`LostDispatchInHandTests`); this is the coordinator's own check.
@Suite("A replica's state beyond the log")
struct StateBeyondTheLogTests {
    static let codec = Codec()

    /// What the client asking for w1's counter is answered when w1's STATE says `sequence`, on a log ending at #0.
    static func answerToAReadOf(stateAt sequence: UInt64) throws -> Message? {
        let engine = try HistoryConflictTests.engine(newBus: false)
        let (worker, client) = (Array("w1".utf8), Array("client".utf8))
        let hello = Message.hello(.init(
            workerID: "w1", instance: 7, stores: [StoreDeclaration(name: "counter", handlesAll: true)], applied: 0, chain: 0))
        engine.handle(.message([worker] + codec.encode(hello), userID: nil), at: .zero)
        engine.handle(.message([client] + codec.encode(.stateRequest(.init(requestID: "c1", store: "counter"))), userID: nil), at: .zero)
        let asked = sent(by: engine, to: worker).compactMap { message -> Message.StateRequest? in
            if case .stateRequest(let request) = message { request } else { nil }
        }
        let query = try #require(asked.first, "the read went to w1")
        let state = Message.state(.init(
            requestID: query.requestID, store: "counter", worker: "w1", sequence: sequence, digest: 1, state: Array("{}".utf8)))
        engine.handle(.message([worker] + codec.encode(state), userID: nil), at: .zero)
        return sent(by: engine, to: client).first
    }

    /// The messages the engine sent `routingID`, out of their bundles.
    static func sent(by engine: CoordinatorEngine, to routingID: [UInt8]) -> [Message] {
        engine.takeEffects().flatMap { effect -> [Message] in
            guard case .send(let message, let to) = effect, to == routingID else { return [] }
            return (try? codec.decodeAll(codec.encode(message))) ?? []
        }
    }

    @Test func aStateBeyondTheLogIsRefused() throws {
        guard case .error(let error)? = try Self.answerToAReadOf(stateAt: 3) else {
            Issue.record("no ERROR")
            return
        }
        #expect(error.requestID == "c1" && error.code == .busy, "\(error)")
        #expect(error.message.contains("beyond this coordinator's log (#0)"), "\(error.message)")
    }

    @Test func aStateWithinTheLogIsForwarded() throws {
        guard case .state(let state)? = try Self.answerToAReadOf(stateAt: 0) else {
            Issue.record("no STATE")
            return
        }
        #expect(state.requestID == "c1" && state.sequence == 0)
    }
}
