extension IOLoopScope {
    /// Runs a ZAP authentication handler on this loop: a REP socket bound to ``ZAPRequest/endpoint`` that answers
    /// every request with what `authorize` decides.
    ///
    /// Start it before any socket of the context accepts secured connections; there can be only one per context.
    /// A malformed request is answered with status 500 and reported to the loop's `onError`.
    ///
    /// ```swift
    /// let admitted: Set<String> = [workerKeys.publicKey]
    /// try scope.serveZAP { request in
    ///     guard let key = request.curvePublicKey, admitted.contains(key) else { return .deny(request) }
    ///     return .allow(request, userID: key)
    /// }
    /// ```
    ///
    /// - Returns: The handler's socket; close it (or ``remove(_:)`` it) to stop authenticating.
    /// - Throws: ``ZMQError``: `EADDRINUSE` if a handler is already bound in this context.
    @discardableResult
    public func serveZAP(_ authorize: @escaping (ZAPRequest) -> ZAPReply) throws(ZMQError) -> ZMQSocket {
        let handler = try socket(.rep)
        try handler.bind(ZAPRequest.endpoint)
        add(handler) { [loop] socket in
            while let frames = try socket.tryReceive() {
                let reply: ZAPReply
                do {
                    reply = authorize(try ZAPRequest(frames: frames))
                } catch {
                    loop.onError(error)
                    reply = ZAPReply(requestID: frames.count > 1 ? frames[1] : [], statusCode: .internalError,
                                     statusText: "malformed ZAP request")
                }
                try socket.send(reply.frames)
            }
        }
        return handler
    }
}
