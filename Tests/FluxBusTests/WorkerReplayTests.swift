import Flux
import FluxBusProtocol
import FluxStores
import Logging
import Testing

@testable import FluxBus

/// A catching-up worker's engine, fed REPLAYs directly. An entry whose one store here waits for no planned store runs
/// without a `LocalDispatch` (`replayAlone`); the others, and an entry whose store the bus has as unknown, go through
/// it. Both ways must leave the same state, the same chain, and say the same to the coordinator.
@Suite("Worker engine: replaying entries alone and through the dispatch table")
struct WorkerReplayTests {
    static func at(_ milliseconds: Int64) -> MonotonicTime { MonotonicTime.zero.advanced(by: .milliseconds(milliseconds)) }

    /// An engine hosting `counter`, welcomed at sequence 0 by a coordinator whose log reaches `sequence`.
    static func catchingUpEngine(logReaches sequence: UInt64) -> WorkerEngine {
        let engine = WorkerEngine(
            id: "w1", instance: 1, stores: [AnyStore(CounterStore.self)], heartbeat: .milliseconds(100),
            logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }), now: .zero)
        engine.handle(.start, at: .zero)
        let welcome = Message.welcome(.init(
            epoch: 1, sequence: sequence, publishEndpoint: "inproc://publish", heartbeatMillis: 100, deadlineMillis: 400))
        engine.handle(.message(Codec().encode(welcome), fromSubscriber: false), at: at(10))
        _ = engine.takeEffects()
        return engine
    }

    static func entry(_ sequence: UInt64, by: Int, plan: [PlanStep], outputs: [StoreOutput]) -> ReplayEntry {
        ReplayEntry(
            epoch: 1, sequence: sequence, actionType: "counter.add", payload: Array(#"{"by":\#(by)}"#.utf8), plan: plan,
            outputs: outputs)
    }

    static func replay(_ engine: WorkerEngine, _ entries: [ReplayEntry], at time: Int64 = 20) {
        engine.handle(.message(Codec().encode(.replay(.init(epoch: 1, entries: entries))), fromSubscriber: false), at: at(time))
    }

    /// The commands the engine sent since the last call, BUNDLEs opened.
    static func sent(_ engine: WorkerEngine) -> [Message] {
        let codec = Codec()
        return engine.takeEffects().flatMap { effect -> [Message] in
            guard case .send(let message) = effect else { return [] }
            return (try? codec.decodeAll(codec.encode(message))) ?? []
        }
    }

    static func counterState(_ engine: WorkerEngine) throws -> String {
        String(decoding: try engine.stores[0].encodedState(), as: UTF8.self)
    }

    @Test func anEntryReplayedAloneLeavesWhatTheDispatchTableLeaves() throws {
        let alone = [PlanStep(store: "counter")]
        // `counter` waits for `other`, which runs elsewhere: this entry needs the table.
        let waiting = [PlanStep(store: "other"), PlanStep(store: "counter", waitsFor: ["other"])]
        let known = [StoreOutput(store: "other", status: .ok), StoreOutput(store: "counter", status: .ok)]
        let entries = (1...6).map { sequence in
            Self.entry(sequence, by: Int(sequence), plan: sequence % 2 == 0 ? waiting : alone, outputs: known)
        }
        let replayed = Self.catchingUpEngine(logReaches: 6)
        Self.replay(replayed, entries)
        // The same entries, each with `counter` unknown on the bus: every one goes through the table, which reports it.
        let unknown = [StoreOutput(store: "other", status: .ok), StoreOutput(store: "counter", status: .unknown)]
        let reported = Self.catchingUpEngine(logReaches: 6)
        Self.replay(reported, entries.map { Self.entry($0.sequence, by: Int($0.sequence), plan: $0.plan, outputs: unknown) })

        #expect(replayed.lastApplied == 6 && reported.lastApplied == 6)
        #expect(try Self.counterState(replayed) == #"{"value":21}"#)
        #expect(try Self.counterState(reported) == #"{"value":21}"#)
        #expect(replayed.chain != nil && replayed.chain == reported.chain)
        #expect(replayed.lastRuns[0]?.sequence == 6 && replayed.lastRuns[0]?.result.status == .ok)
        // Nothing is acknowledged when the bus knows every outcome; each unknown one is reported with its digest.
        let acksKnown = Self.sent(replayed).filter { if case .ack = $0 { true } else { false } }
        let acksUnknown = Self.sent(reported).compactMap { message -> Message.Ack? in
            if case .ack(let ack) = message { ack } else { nil }
        }
        #expect(acksKnown.isEmpty)
        #expect(acksUnknown.map(\.sequence) == [1, 2, 3, 4, 5, 6])
        #expect(acksUnknown.allSatisfy { $0.results.first?.digest != 0 })
    }

    @Test func aFailingHandlerReplayedAloneIsRecordedAsFailedAndTheWorkerMovesOn() throws {
        let engine = Self.catchingUpEngine(logReaches: 2)
        let alone = [PlanStep(store: "counter")]
        let outputs = [StoreOutput(store: "counter", status: .failed, message: "overflow")]
        Self.replay(engine, [
            Self.entry(1, by: Int.max, plan: alone, outputs: [StoreOutput(store: "counter", status: .ok)]),
            Self.entry(2, by: 1, plan: alone, outputs: outputs),
        ])
        #expect(engine.lastApplied == 2)
        #expect(try Self.counterState(engine) == "{\"value\":\(Int.max)}")
        #expect(engine.lastRuns[0]?.result.status == .failed)
        #expect(engine.lastRuns[0]?.result.message.contains("overflows") == true)
    }

    @Test func aGracefulStopEndsTheReplayOnceTheDispatchInHandFinishes() throws {
        let engine = Self.catchingUpEngine(logReaches: 3)
        // #1 arrives live and waits for `other`'s release; then the worker is asked to stop.
        let waiting = [PlanStep(store: "other"), PlanStep(store: "counter", waitsFor: ["other"])]
        let action = Message.action(.init(
            epoch: 1, sequence: 1, actionType: "counter.add", payload: Array(#"{"by":1}"#.utf8), plan: waiting))
        engine.handle(.message(Codec().encode(action), fromSubscriber: true), at: Self.at(15))
        engine.handle(.shutdown, at: Self.at(16))
        #expect(engine.phase != .stopped)
        _ = engine.takeEffects()
        // The REPLAY settles #1, which finishes it: the worker says goodbye and runs nothing after it.
        let known = [StoreOutput(store: "other", status: .ok), StoreOutput(store: "counter", status: .ok)]
        Self.replay(engine, [
            Self.entry(1, by: 1, plan: waiting, outputs: known),
            Self.entry(2, by: 10, plan: [PlanStep(store: "counter")], outputs: known),
            Self.entry(3, by: 100, plan: waiting, outputs: known),
        ])
        #expect(engine.phase == .stopped)
        #expect(Self.sent(engine).contains { if case .goodbye = $0 { true } else { false } })
        #expect(engine.lastApplied == 1)
        #expect(try Self.counterState(engine) == #"{"value":1}"#)
    }
}
