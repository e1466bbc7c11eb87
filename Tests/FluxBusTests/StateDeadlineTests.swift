import FluxBusProtocol
import Logging
import Testing

@testable import FluxBus

/// A replica encodes a store's whole state before it answers a STATE_REQUEST, which takes seconds for hundreds of
/// megabytes: the first answer gets `stateTimeout`, not `ackTimeout` (found by a real-process probe: 3,000,000 keys
/// could never be read, nor snapshotted, with the default 5 s). A late answer is a slow replica, not a malformed
/// message; and a replica lost meanwhile ends the wait at once.
@Suite("The deadline of a state request")
struct StateDeadlineTests {
    static let codec = Codec()
    static let worker = Array("w1".utf8)
    static let client = Array("client".utf8)

    /// A coordinator with w1 joined (catching up, so it may be asked), heartbeating as the tests tick.
    final class Bus {
        let engine: CoordinatorEngine
        private(set) var now = MonotonicTime.zero
        var workerBeats = true
        /// What w1 and the client were sent, in order.
        private(set) var toWorker: [Message] = []
        private(set) var toClient: [Message] = []

        init(stateTimeout: Duration) throws {
            let log = MemoryLog(sync: .off)
            let recovered = try log.recover()
            var configuration = CoordinatorConfiguration(
                controlEndpoint: "inproc://c", publishEndpoint: "inproc://p", ackTimeout: .seconds(5))
            configuration.stateTimeout = stateTimeout
            engine = CoordinatorEngine(
                configuration: configuration, epoch: 1, log: log, recovered: recovered,
                controlEndpoint: "inproc://c", advertisedPublishEndpoint: "inproc://p",
                logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }), now: .zero)
            let store = StoreDeclaration(name: "kv", handlesAll: true, lastApplied: 0)
            send(.hello(.init(workerID: "w1", instance: 7, stores: [store], applied: 0, chain: 0, appliedEpoch: 0)), from: Self.workerID)
        }

        static let workerID = StateDeadlineTests.worker

        func send(_ message: Message, from routingID: [UInt8]) {
            engine.handle(.message([routingID] + StateDeadlineTests.codec.encode(message), userID: nil), at: now)
            engine.handle(.burstEnd, at: now)
            collect()
        }

        /// Ticks every 250 ms (w1 heartbeating, unless it stopped) until `time` has passed.
        func advance(by time: Duration) {
            let end = now.advanced(by: time)
            while now < end {
                now = now.advanced(by: .milliseconds(250))
                if workerBeats { send(.heartbeat(.init(epoch: 1, sequence: 0)), from: Self.workerID) }
                engine.handle(.tick, at: now)
                collect()
            }
        }

        /// The query id w1 was last asked for a state under.
        var lastQuery: String? {
            toWorker.reversed().lazy.compactMap { if case .stateRequest(let request) = $0 { request.requestID } else { nil } }.first
        }

        private func collect() {
            for effect in engine.takeEffects() {
                guard case .send(let message, let routingID) = effect else { continue }
                let messages = (try? StateDeadlineTests.codec.decodeAll(StateDeadlineTests.codec.encode(message))) ?? [message]
                if routingID == StateDeadlineTests.worker { toWorker += messages }
                if routingID == StateDeadlineTests.client { toClient += messages }
            }
        }
    }

    static func state(_ queryID: String) -> Message {
        let bytes = Array(#"{"a":1}"#.utf8)
        return .state(.init(
            requestID: queryID, store: "kv", worker: "w1", sequence: 0, digest: 1, size: UInt64(bytes.count),
            checksum: StateDigest.fnv1a64(bytes), state: bytes))
    }

    @Test("a replica that answers after the ack timeout, within the state timeout, is relayed to the client")
    func aSlowFirstAnswerWithinTheStateTimeoutArrives() throws {
        let bus = try Bus(stateTimeout: .seconds(120))
        bus.send(.stateRequest(.init(requestID: "read-1", store: "kv")), from: Self.client)
        let query = try #require(bus.lastQuery, "the coordinator asked w1")
        bus.advance(by: .seconds(30))  // six ack timeouts: w1 is still encoding
        #expect(bus.toClient.isEmpty, "the client was answered before the replica: \(bus.toClient)")
        bus.send(Self.state(query), from: Self.worker)
        guard case .state(let state) = bus.toClient.first else { Issue.record("\(bus.toClient)"); return }
        #expect(state.requestID == "read-1" && state.worker == "w1")
        #expect(bus.engine.policing.malformed == 0)
    }

    @Test("past the state timeout the client hears so, and the replica's late STATE is dropped, not counted malformed")
    func aLateAnswerIsNotMalformed() throws {
        let bus = try Bus(stateTimeout: .seconds(8))
        bus.send(.stateRequest(.init(requestID: "read-1", store: "kv")), from: Self.client)
        let query = try #require(bus.lastQuery)
        bus.advance(by: .seconds(7))
        #expect(bus.toClient.isEmpty, "answered at the ack timeout, not the state timeout: \(bus.toClient)")
        bus.advance(by: .seconds(2))
        guard case .error(let error) = bus.toClient.first else { Issue.record("\(bus.toClient)"); return }
        #expect(error.requestID == "read-1" && error.code == .timeout)
        bus.send(Self.state(query), from: Self.worker)
        bus.send(.error(.init(requestID: query, code: .busy, message: "late")), from: Self.worker)
        #expect(bus.engine.policing.malformed == 0)
        #expect(bus.toClient.count == 1, "the late answer went nowhere: \(bus.toClient)")
        // The same STATE from a peer that is not a worker is still malformed.
        bus.send(Self.state(query), from: Self.client)
        #expect(bus.engine.policing.malformed == 1)
    }

    @Test("a replica lost before it answers ends the client's wait at once")
    func aLostReplicaEndsTheWait() throws {
        let bus = try Bus(stateTimeout: .seconds(120))
        bus.send(.stateRequest(.init(requestID: "read-1", store: "kv")), from: Self.client)
        bus.workerBeats = false
        bus.advance(by: .seconds(3))  // the deadline of silence is 4 heartbeats: 2 s
        guard case .error(let error) = bus.toClient.first else { Issue.record("\(bus.toClient)"); return }
        #expect(error.requestID == "read-1" && error.code == .noLiveReplica)
        #expect(error.message.contains("w1"))
    }
}
