import FluxBusProtocol
import ZeroMQ

extension BusClient {
    /// Every dispatch the coordinator completes from now on, as it publishes them. Ends when the stream is dropped
    /// or the client closed.
    /// - Parameter publishEndpoint: where to subscribe; by default the one `status` reports.
    public func completions(publishEndpoint: String? = nil) async throws -> AsyncThrowingStream<Message.Completed, any Error> {
        var endpoint = publishEndpoint
        if endpoint == nil { endpoint = try await status().publishEndpoint }
        let publisher = endpoint!
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: Message.Completed.self, bufferingPolicy: .bufferingNewest(100_000))
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
                        if case .completed(let completed) = message { continuation.yield(completed) }
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
