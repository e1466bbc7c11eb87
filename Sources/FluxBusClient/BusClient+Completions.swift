import FluxBusProtocol
import ZeroMQ

extension BusClient {
    /// Every dispatch the coordinator completes from now on, as it publishes them. Ends when the stream is dropped
    /// or the client closed.
    ///
    /// The stream keeps the newest 100,000 completions a slow reader has not taken yet and drops older ones: a reader
    /// that must see every dispatch checks that sequences follow on, and fills a gap from ``history(from:to:timeout:)``
    /// (as ``watch(_:named:)`` and `fluxbus tail` do).
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
        let subscription = try await loop.run { [security] scope in
            let socket = try scope.socket(.sub)
            try security?.apply(to: socket)
            try socket.subscribe(Codec.signature)
            try socket.connect(publisher)
            let codec = Codec()
            scope.add(socket) { socket in
                while let frames = try socket.tryReceive() {
                    // A burst of completions comes as a BUNDLE.
                    for message in (try? codec.decodeAll(frames)) ?? [] {
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
}
