import Foundation
import FluxBusClient
import FluxBusProtocol
import Synchronization
import Testing

/// `BusClient.completions()` against a publisher played by hand: what a subscriber is told when a publication does
/// not decode.
@Suite("BusClient: the stream of completions", .timeLimit(.minutes(1)))
struct CompletionStreamTests {
    static func completed(_ sequence: UInt64) -> Message {
        .completed(.init(epoch: 1, sequence: sequence, actionType: "counter.add", elapsedMicros: 10, outcomes: []))
    }

    /// Reads `stream` until it ends, while a script publishes #1 until the reader has it (a subscription takes hold
    /// some time after it is made), then `frames`, then #3. Returns the sequences read, and the error it ended with.
    static func read(
        _ stream: AsyncThrowingStream<Message.Completed, any Error>, from coordinator: RawCoordinator,
        after frames: [[UInt8]], until last: UInt64? = nil
    ) async throws -> (sequences: [UInt64], ending: BusError?) {
        let heard = Atomic(false)
        let publisher = PeerScript {
            while !heard.load(ordering: .acquiring) {
                try coordinator.publish(Self.completed(1))
                Thread.sleep(forTimeInterval: 0.01)
            }
            try coordinator.publish(frames: frames)
            try coordinator.publish(Self.completed(3))
        }
        var sequences: [UInt64] = []
        var ending: BusError?
        do {
            for try await completed in stream {
                sequences.append(completed.sequence)
                heard.store(true, ordering: .releasing)
                if completed.sequence == last { break }
            }
        } catch let error as BusError {
            ending = error
        }
        try await publisher.value()
        return (sequences, ending)
    }

    /// A publication of another protocol version ends the stream with an error that names both versions: none of
    /// that coordinator's publications could be read, so waiting for them would be silence.
    @Test func aPublicationOfAnotherVersionEndsTheStream() async throws {
        try await ClientRequestTests.withClient(limit: .zero) { coordinator, client in
            let stream = try await client.completions(publishEndpoint: coordinator.publish)
            var frames = Codec().encode(Self.completed(2))
            frames[0][frames[0].count - 1] = Codec.version + 1
            let (sequences, ending) = try await Self.read(stream, from: coordinator, after: frames)
            #expect(!sequences.isEmpty)
            #expect(sequences.allSatisfy { $0 == 1 }, "nothing after the publication of another version: \(sequences)")
            #expect(ending?.code == .protocolViolation)
            #expect(ending?.message.contains(coordinator.publish) == true)
            #expect(ending?.message.contains("\(DecodeError(code: .unsupportedVersion, value: Int(Codec.version) + 1))") == true)
            #expect(ending?.message.contains("FLXB version \(Codec.version)") == true)
        }
    }

    /// A damaged publication of this version is dropped, as the protocol asks, and counted; the stream goes on, and
    /// its reader sees the gap.
    @Test func aDamagedPublicationIsDroppedAndCounted() async throws {
        try await ClientRequestTests.withClient(limit: .zero) { coordinator, client in
            let stream = try await client.completions(publishEndpoint: coordinator.publish)
            #expect(client.undecodablePublications == 0)
            let (sequences, ending) = try await Self.read(stream, from: coordinator, after: [Codec.signature, [0xEE, 1, 2]], until: 3)
            #expect(ending == nil)
            #expect(sequences.last == 3)
            #expect(sequences.dropLast().allSatisfy { $0 == 1 })
            #expect(client.undecodablePublications == 1)
        }
    }
}
