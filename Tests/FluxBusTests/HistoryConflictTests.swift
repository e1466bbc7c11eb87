import FluxBusProtocol
import Logging
import Testing

@testable import FluxBus

/// A worker's HELLO is checked against the log's chain at the sequence it applied (docs/PROTOCOL.md, appendix B).
/// The coordinator handles every message waiting before it commits them, so a DISPATCH that took that very sequence
/// may still be uncommitted when the HELLO is checked: found while writing the power-cut scenarios (a worker applied an
/// action the log lost, and the sequence went to another). The log answers only for what it committed, so the check
/// commits first, as FETCH does before it reads, and sees that DISPATCH's action rather than an empty place.
@Suite("A HELLO's history against the log")
struct HistoryConflictTests {
    static let codec = Codec()

    static func engine(newBus: Bool, epoch: UInt64? = nil) throws -> CoordinatorEngine {
        let log = MemoryLog(sync: .off)
        let recovered = try log.recover()
        var configuration = CoordinatorConfiguration(controlEndpoint: "inproc://c", publishEndpoint: "inproc://p")
        configuration.newBus = newBus
        return CoordinatorEngine(
            configuration: configuration, epoch: epoch ?? recovered.lastEpoch + 1, log: log, recovered: recovered,
            controlEndpoint: "inproc://c", advertisedPublishEndpoint: "inproc://p",
            logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }), now: .zero)
    }

    static func hello(applying payload: String, inEpoch appliedEpoch: UInt64 = 0) -> [[UInt8]] {
        let chain = LogChain.next(after: 0, sequence: 1, actionType: "counter.add", payload: Array(payload.utf8), error: nil)
        let store = StoreDeclaration(name: "counter", handlesAll: true, lastApplied: 1)
        return [Array("w1".utf8)] + codec.encode(.hello(.init(
            workerID: "w1", instance: 7, stores: [store], applied: 1, chain: chain, appliedEpoch: appliedEpoch)))
    }

    /// What the engine answered w1, as commands.
    static func answersToW1(_ engine: CoordinatorEngine) -> [Command] {
        engine.takeEffects().flatMap { effect -> [Command] in
            guard case .send(let message, let routingID) = effect, routingID == Array("w1".utf8) else { return [] }
            return ((try? codec.decodeAll(codec.encode(message))) ?? []).map(\.command)
        }
    }

    @Test("a HELLO in the burst whose DISPATCH took its sequence for another action is refused", arguments: [
        #"{"by":1}"#, #"{"by":2}"#,
    ])
    func theSequenceTakenInTheSameBurstIsChecked(workerApplied payload: String) throws {
        let engine = try Self.engine(newBus: false)
        let dispatch = Message.dispatch(.init(requestID: "r1", actionType: "counter.add", payload: Array(#"{"by":2}"#.utf8)))
        engine.handle(.message([Array("client".utf8)] + Self.codec.encode(dispatch), userID: nil), at: .zero)
        // No burst end between them: the DISPATCH's action is logged as #1 and not committed yet.
        engine.handle(.message(Self.hello(applying: payload), userID: nil), at: .zero)
        let answers = Self.answersToW1(engine)
        if payload == #"{"by":2}"# {
            // The same action at the same sequence (a retry after the restart): the same history.
            #expect(answers.contains(.welcome), "\(answers)")
        } else {
            // Another action: the worker's history differs from the log's; an in-memory log refuses it (REJECT 9).
            #expect(answers == [.reject], "\(answers)")
        }
    }

    /// The same action logged at the same sequence in epoch 5 has the chain of the one the worker applied, but the
    /// worker applied its #1 in epoch 4: that was another entry, which a power cut lost from the log (it may have
    /// been planned otherwise, or had other outcomes released). A worker that applied #1 in epoch 5 applied this
    /// entry, and one that does not know its epoch (0) is held to the chain alone (the simulator, seeds 100 and 464
    /// of the lost-commit swarm: a worker was welcomed with a store that had run what the log says it did not).
    @Test("an entry logged again in a later epoch than the worker applied it in is another entry", arguments: [
        (UInt64(4), false), (5, true), (0, true),
    ])
    func theEpochTellsAnEntryLoggedAgain(appliedEpoch: UInt64, welcomed: Bool) throws {
        let engine = try Self.engine(newBus: true, epoch: 5)
        let dispatch = Message.dispatch(.init(requestID: "r1", actionType: "counter.add", payload: Array(#"{"by":2}"#.utf8)))
        engine.handle(.message([Array("client".utf8)] + Self.codec.encode(dispatch), userID: nil), at: .zero)
        engine.handle(.message(Self.hello(applying: #"{"by":2}"#, inEpoch: appliedEpoch), userID: nil), at: .zero)
        let answers = Self.answersToW1(engine)
        #expect(answers.contains(.welcome) == welcomed && answers.contains(.reject) == !welcomed, "\(answers)")
    }
}
