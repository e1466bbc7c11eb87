import FluxBusProtocol
import Logging
import Testing

@testable import FluxBus

/// `receiveAck` settles the stores an ACK leaves answered by every replica, and no other: on a plan of 71 stores, the
/// 70th, which has a second replica and a dependent, is not settled (nor released to its dependent) before that
/// replica answers. An engine driven directly, with a log in memory.
@Suite("An ACK for a wide plan settles only what every replica answered")
struct WidePlanAckTests {
    static let codec = Codec()
    static let (first, second, client) = (Array("w1".utf8), Array("w2".utf8), Array("client".utf8))
    static let names = (0..<70).map { "s" + String($0 + 100) }

    final class Bus {
        let engine: CoordinatorEngine
        private(set) var published: [Message] = []
        private(set) var toClient: [Message] = []
        /// What w1, which hosts the dependent, was sent.
        private(set) var toFirst: [Message] = []

        init() throws {
            let log = MemoryLog(sync: .off)
            let recovered = try log.recover()
            let configuration = CoordinatorConfiguration(
                controlEndpoint: "inproc://c", publishEndpoint: "inproc://p", ackTimeout: .seconds(5))
            engine = CoordinatorEngine(
                configuration: configuration, epoch: 1, log: log, recovered: recovered,
                controlEndpoint: "inproc://c", advertisedPublishEndpoint: "inproc://p",
                logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }), now: .zero)
        }

        func send(_ message: Message, from routingID: [UInt8]) {
            engine.handle(.message([routingID] + WidePlanAckTests.codec.encode(message), userID: nil), at: .zero)
            engine.handle(.burstEnd, at: .zero)
            perform(engine.takeEffects())
        }

        /// Carries out effects as the shell does: a sync runs where it stands, and what it releases follows.
        private func perform(_ effects: [CoordinatorEffect]) {
            let decode = { (message: Message) in
                (try? WidePlanAckTests.codec.decodeAll(WidePlanAckTests.codec.encode(message))) ?? [message]
            }
            for effect in effects {
                switch effect {
                case .publish(let message): published += decode(message)
                case .send(let message, let routingID) where routingID == WidePlanAckTests.client: toClient += decode(message)
                case .send(let message, let routingID) where routingID == WidePlanAckTests.first: toFirst += decode(message)
                case .syncLog:
                    engine.syncLog()
                    perform(engine.takeEffects())
                default: break
                }
            }
        }

        func join(_ routingID: [UInt8], hosting stores: [String], dependent: String? = nil) {
            let declarations = stores.map { StoreDeclaration(name: $0, handlesAll: true) }
                + (dependent.map { [StoreDeclaration(name: $0, dependsOn: [WidePlanAckTests.names.last!], handlesAll: true)] } ?? [])
            let id = String(decoding: routingID, as: UTF8.self)
            send(.hello(.init(workerID: id, instance: 1, stores: declarations, applied: 0, chain: 0, appliedEpoch: 0)), from: routingID)
            send(.ready(.init(epoch: 1, lastApplied: 0)), from: routingID)
        }
    }

    static func ok(_ store: String) -> StoreResult { StoreResult(store: store, status: .ok, digest: 9) }

    /// The stores of every RELEASE sent to w1 so far, in order.
    func releases(_ bus: Bus) -> [String] {
        bus.toFirst.flatMap { message -> [String] in
            guard case .release(let release) = message else { return [] }
            return release.outputs.map(\.store)
        }
    }

    @Test func aStoreWithAReplicaStillOwingWaitsBeforeItSettles() throws {
        let bus = try Bus()
        let wide = Self.names.last!
        bus.join(Self.first, hosting: Self.names, dependent: "tail")
        bus.join(Self.second, hosting: [wide])
        bus.send(.dispatch(.init(requestID: "r1", actionType: "go", payload: [])), from: Self.client)
        let action = try #require(bus.published.lazy.compactMap { if case .action(let a) = $0 { a } else { nil } }.first)
        let position = try #require(action.plan.firstIndex { $0.store == wide })
        #expect(action.plan.count == 71 && position >= 64)

        bus.send(.ack(.init(epoch: 1, sequence: action.sequence, results: Self.names.map(Self.ok))), from: Self.first)
        #expect(releases(bus).isEmpty, "\(wide) released before w2's replica answered")
        bus.send(.ack(.init(epoch: 1, sequence: action.sequence, results: [Self.ok(wide)])), from: Self.second)
        #expect(releases(bus) == [wide])
        #expect(bus.toClient.isEmpty, "answered before `tail` ran")

        bus.send(.ack(.init(epoch: 1, sequence: action.sequence, results: [Self.ok("tail")])), from: Self.first)
        guard case .result(let result)? = bus.toClient.last else {
            Issue.record("no RESULT: \(bus.toClient.map(\.command))")
            return
        }
        #expect(result.outcomes.count == 72 && result.outcomes.allSatisfy { $0.status == .ok })
        #expect(Set(result.outcomes.map(\.store)) == Set(Self.names + ["tail"]))
    }
}
