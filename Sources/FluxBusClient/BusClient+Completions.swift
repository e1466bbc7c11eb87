import FluxBusProtocol
import Synchronization
import ZeroMQ

extension BusClient {
    /// How many publications this client's streams (``completions(publishEndpoint:)``, watches, `fluxbus tail`)
    /// dropped because they did not decode. Each was a dispatch its reader saw only as a gap in the sequences.
    public var undecodablePublications: Int { undecodable.count }

    /// Every dispatch the coordinator completes from now on, as it publishes them. Ends when the stream is dropped
    /// or the client closed.
    ///
    /// The stream keeps the newest 100,000 completions a slow reader has not taken yet and drops older ones: a reader
    /// that must see every dispatch checks that sequences follow on, and fills a gap from ``history(from:to:timeout:)``
    /// (as ``watch(_:named:)`` and `fluxbus tail` do).
    ///
    /// A publication of another protocol version ends the stream with a ``BusError`` of code
    /// ``BusError/Code/protocolViolation``: that coordinator's publications can never be read. Any other publication
    /// that does not decode is dropped, as the protocol asks, and counted in ``undecodablePublications``; its
    /// dispatch shows as a gap in the sequences.
    /// - Parameter publishEndpoint: where to subscribe; by default the one `status` reports.
    public func completions(publishEndpoint: String? = nil) async throws -> AsyncThrowingStream<Message.Completed, any Error> {
        try await subscribe(publishEndpoint: publishEndpoint, buffer: 100_000) {
            if case .completed(let completed) = $0 { completed } else { nil }
        }
    }

    /// The COMPLETEDs and HEARTBEATs the coordinator publishes from now on, keeping the newest `buffer` a slow reader
    /// has not taken. A HEARTBEAT names the last sequence published while the bus is idle.
    package func publications(publishEndpoint: String? = nil, buffer: Int) async throws -> AsyncThrowingStream<Message, any Error> {
        try await subscribe(publishEndpoint: publishEndpoint, buffer: buffer) {
            switch $0 {
            case .completed, .heartbeat: $0
            default: nil
            }
        }
    }

    /// Subscribes to the publish endpoint and yields what `pick` keeps of each message, the newest `buffer` kept.
    private func subscribe<Element: Sendable>(
        publishEndpoint: String?, buffer: Int, pick: @escaping @Sendable (Message) -> Element?
    ) async throws -> AsyncThrowingStream<Element, any Error> {
        var endpoint = publishEndpoint
        if endpoint == nil { endpoint = try await status().publishEndpoint }
        let publisher = endpoint!
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: Element.self, bufferingPolicy: .bufferingNewest(buffer))
        let subscription = try await loop.run { [security, undecodable] scope in
            let socket = try scope.socket(.sub)
            try security?.apply(to: socket)
            // Every version's messages, not only this one's: a coordinator of another version is then an error, not silence.
            try socket.subscribe(Codec.magic)
            try socket.connect(publisher)
            let codec = Codec()
            scope.add(socket) { socket in
                while let frames = try socket.tryReceive() {
                    // A burst of completions comes as a BUNDLE.
                    let messages: [Message]
                    do throws(DecodeError) { messages = try codec.decodeAll(frames) } catch {
                        // Another version: nothing this coordinator publishes will ever decode, so waiting is pointless.
                        if error.code == .unsupportedVersion {
                            continuation.finish(throwing: Self.versionMismatch(error, at: publisher))
                            return
                        }
                        // Anything else is dropped (PROTOCOL.md, Error handling), counted, and seen as a gap.
                        undecodable.add()
                        continue
                    }
                    for message in messages {
                        if let element = pick(message) { continuation.yield(element) }
                    }
                }
            }
            return IOLoopBound(socket, scope: scope)
        }
        continuation.onTermination = { [loop] _ in
            loop.execute { scope in
                scope.remove(subscription.value)
                subscription.value.close()
            }
        }
        return stream
    }

    private static func versionMismatch(_ error: DecodeError, at publisher: String) -> BusError {
        BusError(code: .protocolViolation, message:
            "the coordinator publishing at \(publisher) speaks another protocol than this client, FLXB version "
            + "\(Codec.version) (\(error)): none of its publications can be read, so the stream ends. Use a client of "
            + "the coordinator's version.")
    }
}

/// A count the loop's thread adds to and any thread reads: a class, so that a subscription's handler can hold it.
final class PublicationDrops: Sendable {
    private let value = Atomic(0)
    func add() { value.add(1, ordering: .relaxed) }
    var count: Int { value.load(ordering: .relaxed) }
}
