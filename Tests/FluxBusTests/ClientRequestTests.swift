import Foundation
import FluxBusClient
import FluxBusProtocol
import Testing
import ZeroMQ

/// `BusClient` against a coordinator played by hand (``RawCoordinator``), in each of the ways its answers can reach a
/// request: the I/O loop always receives (limit zero), the caller waits on the socket itself for a while (the
/// default), or for as long as its request lasts (30 s).
@Suite("BusClient: many requests at once, timeouts and close", .timeLimit(.minutes(1)))
struct ClientRequestTests {
    static let directWaitLimits: [Duration] = [.zero, .milliseconds(2), .seconds(30)]

    /// Runs `body` with a hand-played coordinator and a client of it, and closes both after.
    static func withClient(limit: Duration, _ body: (RawCoordinator, BusClient) async throws -> Void) async throws {
        let coordinator = try RawCoordinator()
        let client = try await BusClient(endpoint: coordinator.control, context: coordinator.context, timeout: .seconds(20),
                                         security: nil, directWaitLimit: limit)
        do { try await body(coordinator, client) } catch {
            await client.close()
            coordinator.close()
            throw error
        }
        await client.close()
        coordinator.close()
    }

    /// A STATUS answering `id`, which names its request in its publish endpoint too.
    static func status(_ id: String) -> Message {
        .status(.init(requestID: id, epoch: 1, sequence: 0, queueLength: 0, publishEndpoint: "for \(id)", workers: [], stores: []))
    }

    /// Receives `count` STATUS_REQUESTs (each round of those in flight answered in reverse order, two at a time
    /// in a BUNDLE), answering each unless `ignoring` says so; returns the ids of those it did not answer.
    static func serve(
        _ coordinator: RawCoordinator, count: Int, ignoring: @escaping @Sendable (Int) -> Bool = { _ in false }
    ) -> PeerScript<[String]> {
        PeerScript {
            var ignored: [String] = []
            var received = 0
            var round: [(from: [UInt8], id: String)] = []
            while received < count {
                // What is in flight now is one round; a short wait ends it.
                if let (from, message) = try coordinator.receive(timeout: round.isEmpty ? .seconds(20) : .milliseconds(1)) {
                    guard case .statusRequest(let request) = message else { continue }
                    if ignoring(received) { ignored.append(request.requestID) } else { round.append((from, request.requestID)) }
                    received += 1
                    continue
                }
                try answer(round.reversed(), on: coordinator)
                round = []
            }
            try answer(round.reversed(), on: coordinator)
            return ignored
        }
    }

    /// How a STATUS request failed; nil if it was answered.
    static func failure(of client: BusClient, timeout: Duration?) async -> BusError? {
        do {
            _ = try await client.status(timeout: timeout)
        } catch let error as BusError {
            return error
        } catch {
            Issue.record("unexpected \(error)")
        }
        return nil
    }

    private static func answer(_ requests: [(from: [UInt8], id: String)], on coordinator: RawCoordinator) throws {
        var index = 0
        while index < requests.count {
            let pair = requests[index..<min(index + 2, requests.count)]
            let message = pair.count == 2 ? Codec().bundle(pair.map { status($0.id) }) : status(pair.first!.id)
            try coordinator.send(message, to: pair.first!.from)
            index += 2
        }
    }

    @Test(arguments: directWaitLimits)
    func manyTasksWithRequestsOutstandingEachGetTheirOwnAnswer(limit: Duration) async throws {
        try await Self.withClient(limit: limit) { coordinator, client async throws in
            let (tasks, each) = (8, 40)
            let served = Self.serve(coordinator, count: tasks * each)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<tasks {
                    group.addTask {
                        for _ in 0..<each {
                            let status = try await client.status()
                            #expect(status.publishEndpoint == "for \(status.requestID)")
                        }
                    }
                }
                try await group.waitForAll()
            }
            #expect(try await served.value().isEmpty)
        }
    }

    @Test(arguments: directWaitLimits)
    func aRequestTimesOutWhileOthersGetTheirAnswers(limit: Duration) async throws {
        try await Self.withClient(limit: limit) { coordinator, client async throws in
            let count = 6
            let served = Self.serve(coordinator, count: count) { $0 == 2 }
            let failed = await withTaskGroup(of: BusError?.self) { group in
                for _ in 0..<count {
                    group.addTask { await Self.failure(of: client, timeout: .milliseconds(500)) }
                }
                return await group.reduce(into: [BusError]()) { if let error = $1 { $0.append(error) } }
            }
            #expect(try await served.value().count == 1)
            #expect(failed.count == 1)
            #expect(failed.allSatisfy { $0.code == .unreachable && $0.message.contains("within") })
            // The client goes on: a lone request, answered, and one that is not, which times out on its own.
            let next = Self.serve(coordinator, count: 2) { $0 == 1 }
            #expect(try await client.status(timeout: .seconds(5)).publishEndpoint.hasPrefix("for "))
            await #expect(throws: BusError.self) { try await client.status(timeout: .milliseconds(1)) }
            #expect(try await next.value().count == 1)
        }
    }

    @Test(arguments: directWaitLimits)
    func closeFailsTheRequestsWaitingAndRefusesLaterOnes(limit: Duration) async throws {
        try await Self.withClient(limit: limit) { coordinator, client async throws in
            let count = 3
            let served = Self.serve(coordinator, count: count) { _ in true }
            let waiting = (0..<count).map { _ in Task { await Self.failure(of: client, timeout: nil) } }
            #expect(try await served.value().count == count)
            await client.close()
            for task in waiting {
                let error = await task.value
                #expect(error?.code == .unreachable)
                #expect(error?.message.contains("closed") == true)
            }
            await #expect(throws: BusError.self) { try await client.status() }
        }
    }

    /// An answer the client cannot decode (here one of a later protocol version) cannot be matched to its request,
    /// so the request times out; the timeout says that answers came and why they failed, rather than that none came.
    @Test(arguments: directWaitLimits)
    func aTimeoutNamesTheAnswersThatCouldNotBeDecoded(limit: Duration) async throws {
        try await Self.withClient(limit: limit) { coordinator, client async throws in
            let answered = PeerScript {
                guard let (from, message) = try coordinator.receive(timeout: .seconds(20)),
                      case .statusRequest(let request) = message else { return false }
                var frames = Codec().encode(Self.status(request.requestID))
                frames[0][frames[0].count - 1] = Codec.version + 1
                try coordinator.send(frames: frames, to: from)
                return true
            }
            let failed = await Self.failure(of: client, timeout: .milliseconds(800))
            #expect(try await answered.value())
            #expect(failed?.code == .unreachable)
            #expect(failed?.message.contains("1 answer meanwhile failed to decode") == true)
            #expect(failed?.message.contains("\(DecodeError(code: .unsupportedVersion, value: Int(Codec.version) + 1))") == true)
            // A later request that is answered properly is unaffected, and one that is not answered at all says so.
            let next = Self.serve(coordinator, count: 2) { $0 == 1 }
            #expect(try await client.status(timeout: .seconds(5)).publishEndpoint.hasPrefix("for "))
            let silent = await Self.failure(of: client, timeout: .milliseconds(200))
            #expect(silent?.message.contains("no answer from the coordinator") == true)
            #expect(silent?.message.contains("decode") == false)
            #expect(try await next.value().count == 1)
        }
    }

    /// A handshake that fails (here the client expects another server key) fails the request waiting for it, however
    /// it waits, and every later one.
    @Test(arguments: directWaitLimits)
    func aFailedHandshakeFailsTheWaitingRequestAndLaterOnes(limit: Duration) async throws {
        let context = try ZMQContext()
        let server = try CurveKeyPair.generate()
        let router = try ZMQSocket(.router, context: context)
        try router.set(.linger, to: .zero)
        try router.set(.curveServer, to: true)
        try router.set(.curveSecretKey, to: server.secretKey)
        try router.bind("tcp://127.0.0.1:*")
        let security = PeerSecurity(serverPublicKey: try CurveKeyPair.generate().publicKey, keyPair: try CurveKeyPair.generate())
        let client = try await BusClient(endpoint: try router.lastEndpoint, context: context, timeout: .seconds(20),
                                         security: security, directWaitLimit: limit)
        let first = await Self.failure(of: client, timeout: nil)
        #expect(first?.code == .refused)
        let later = await Self.failure(of: client, timeout: nil)
        #expect(later?.code == .refused)
        await client.close()
        router.close()
        context.shutdown()
    }
}

/// A script for a peer, started on a thread of its own at once: a request's caller may block a thread of the pool
/// while it waits on its socket, so a peer that needed the pool to start could be late for it.
final class PeerScript<Value: Sendable>: @unchecked Sendable {
    // @unchecked: `outcome` is written once, by the script's thread, before `done` is signalled; read only after.
    private let done = DispatchSemaphore(value: 0)
    private var outcome: Result<Value, any Error>?

    init(_ body: @escaping @Sendable () throws -> Value) {
        Thread { [self] in
            outcome = Result { try body() }
            done.signal()
        }.start()
    }

    func value() async throws -> Value {
        try await onDedicatedThread { [self] in
            done.wait()
            done.signal()
            return try outcome!.get()
        }
    }
}
