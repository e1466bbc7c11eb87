import Foundation
import FluxBusProtocol
import Testing
import ZeroMQ

@testable import FluxBus

/// A request over the protocol's size limits is never dropped without an answer: `BusClient` refuses it before
/// sending, naming the limit and the size, and the coordinator answers one sent anyway with ERROR code 2.
@Suite("Requests over the size limits", .timeLimit(.minutes(1)))
struct OverLimitTests {
    static let nineMiB = [UInt8](repeating: 0x31, count: 9 << 20)

    /// No coordinator listens: the errors below come from the client's own check, not from a timeout.
    @Test func theClientRefusesBeforeSendingAndNamesTheLimit() async throws {
        let context = try ZMQContext()
        let client = try await BusClient(endpoint: "inproc://nobody-\(UUID().uuidString)", context: context, timeout: .seconds(50))
        let payload = await #expect(throws: BusError.self) { try await client.dispatch("kv.set", payload: Self.nineMiB) }
        #expect(payload?.code == .usage)
        #expect(payload?.message == "the payload is 9437184 bytes, over FluxBus's limit of 8 MiB (8388608 bytes) for one payload "
            + "(the coordinator itself takes at most its --max-payload-bytes, 1 MiB by default); send a smaller payload")

        let longID = String(repeating: "r", count: 5_000)
        let id = await #expect(throws: BusError.self) { try await client.dispatch("counter.add", json: "{}", requestID: longID) }
        #expect(id?.code == .usage)
        #expect(id?.message.hasPrefix("the request id is 5000 bytes, over FluxBus's limit of 4096 bytes") == true)

        let six = [UInt8](repeating: 0x31, count: 6 << 20)
        let actions = (0..<3).map { _ in BatchAction(actionType: "kv.set", payload: six, error: nil) }
        let batch = await #expect(throws: BusError.self) { try await client.dispatchBatch(actions) }
        #expect(batch?.code == .usage)
        #expect(batch?.message.contains("over FluxBus's limit of 16 MiB (16777216 bytes) for one message; send fewer actions per batch") == true)

        let second = await #expect(throws: BusError.self) {
            try await client.dispatchBatch([BatchAction(actionType: "a", payload: [], error: nil), BatchAction(actionType: "a", payload: Self.nineMiB, error: nil)])
        }
        #expect(second?.message.hasPrefix("the payload of action 2 of the batch is 9437184 bytes") == true)
        await client.close()
        context.shutdown()
    }

    /// A raw peer that ignores the limits gets an ERROR for each request its coordinator's decoder refuses.
    @Test func theCoordinatorAnswersARequestOverTheLimits() async throws {
        let bus = try await TestBus()
        let (context, endpoint) = (bus.context, bus.control)
        let codec = Codec()
        let requests: [Message] = [
            .dispatch(.init(requestID: "nine", actionType: "kv.set", payload: Self.nineMiB)),
            .dispatch(.init(requestID: String(repeating: "r", count: 5_000), actionType: "kv.set", payload: [])),
            .dispatch(.init(requestID: "seventeen", actionType: "kv.set", payload: [UInt8](repeating: 0x31, count: 17 << 20))),
        ]
        let answers = try await onDedicatedThread { () -> [Message.Error?] in
            let dealer = try ZMQSocket(.dealer, context: context)
            defer { dealer.close() }
            try dealer.set(.linger, to: .zero)
            try dealer.connect(endpoint)
            return try requests.map { request in
                _ = try dealer.send(codec.encode(request))
                guard let frames = try dealer.receive(timeout: .seconds(20)), case .error(let error) = try codec.decode(frames) else { return nil }
                return error
            }
        }
        #expect(answers.count == 3)
        #expect(answers[0]?.requestID == "nine")
        #expect(answers[0]?.code == .invalidRequest)
        #expect(answers[0]?.message.contains("its field `payload` is 9437184 long, over the limit of 8388608 bytes") == true)
        #expect(answers[1]?.requestID == "", "an id over the limit cannot be echoed")
        #expect(answers[1]?.message.contains("its request id of 5000 bytes is over the limit of 4096 bytes") == true)
        #expect(answers[2]?.requestID == "seventeen")
        #expect(answers[2]?.message.contains("over the limit of 16777216 bytes for one message") == true)
        // The connection is still served.
        let client = try await bus.client()
        #expect(try await client.dispatch("noop").sequence == 1)
        await client.close()
        await bus.stop()
    }
}
