import Flux
import FluxBusProtocol
import FluxStores
import Logging
import Testing

@testable import FluxBus

/// The worker engine after a pause of its own (a long handler, SIGSTOP): the coordinator's silence counts from when
/// the engine runs again, as the coordinator's own `resumeAfterStall` does for its workers, while a coordinator that
/// really went quiet is still given up on.
@Suite("Worker engine: its own pauses are not the coordinator's silence")
struct WorkerPauseTests {
    static let heartbeat = Duration.milliseconds(100)

    /// An engine welcomed at 10 ms, with a heartbeat of 100 ms and a deadline of 400 ms.
    static func welcomedEngine() -> WorkerEngine {
        let engine = WorkerEngine(
            id: "w1", instance: 1, stores: [AnyStore(CounterStore.self)], heartbeat: heartbeat,
            logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }), now: .zero)
        engine.handle(.start, at: .zero)
        let welcome = Message.welcome(.init(
            epoch: 1, sequence: 0, publishEndpoint: "inproc://publish", heartbeatMillis: 100, deadlineMillis: 400))
        engine.handle(.message(Codec().encode(welcome), fromSubscriber: false), at: at(10))
        _ = engine.takeEffects()
        return engine
    }

    static func at(_ milliseconds: Int64) -> MonotonicTime { MonotonicTime.zero.advanced(by: .milliseconds(milliseconds)) }

    /// The commands the engine sent since the last call, BUNDLEs opened.
    static func sent(_ engine: WorkerEngine) -> [Command] {
        let codec = Codec()
        return engine.takeEffects().flatMap { effect -> [Command] in
            guard case .send(let message) = effect else { return [] }
            return ((try? codec.decodeAll(codec.encode(message))) ?? []).map(\.command)
        }
    }

    @Test func aTickAfterAFiveSecondPauseHeartbeatsInsteadOfJoiningAgain() {
        let engine = Self.welcomedEngine()
        engine.handle(.tick, at: Self.at(110))
        #expect(Self.sent(engine) == [.heartbeat])
        // The next input comes five seconds later: a handler ran meanwhile, and nothing could be heard.
        engine.handle(.tick, at: Self.at(5_110))
        #expect(Self.sent(engine) == [.heartbeat])
        #expect(engine.phase == .catchingUp)
        // From then on, silence counts again: a coordinator that stays quiet for the deadline is given up on.
        for tick in 1...5 { engine.handle(.tick, at: Self.at(5_110 + Int64(tick) * 100)) }
        #expect(Self.sent(engine).contains(.hello))
        #expect(engine.phase == .joining)
    }

    @Test func aCoordinatorSilentPastTheDeadlineWhileTheEngineTicksIsGivenUpOn() {
        let engine = Self.welcomedEngine()
        var commands: [Command] = []
        for tick in 1...5 {
            engine.handle(.tick, at: Self.at(10 + Int64(tick) * 100))
            commands += Self.sent(engine)
        }
        #expect(commands.filter { $0 == .heartbeat }.count == 4, "\(commands)")
        #expect(commands.last == .hello, "\(commands)")
        #expect(engine.phase == .joining)
    }

    @Test func aTickLateByLessThanTwoIntervalsDoesNotForgive() {
        let engine = Self.welcomedEngine()
        // Ticks 190 ms apart (late, but not a pause): after 400 ms of silence the coordinator is given up on.
        engine.handle(.tick, at: Self.at(200))
        engine.handle(.tick, at: Self.at(390))
        #expect(!Self.sent(engine).contains(.hello))
        engine.handle(.tick, at: Self.at(580))
        #expect(Self.sent(engine).contains(.hello))
    }
}
