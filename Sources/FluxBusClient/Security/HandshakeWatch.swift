import ZeroMQ

/// Reports a failed ZMTP handshake on a connecting socket: a CURVE key the coordinator does not admit, a wrong
/// server key, or plain text against a CURVE coordinator. Without it such a peer would only see silence. A
/// connection that merely drops mid-handshake (a coordinator that died) is no failure: libzmq reconnects (see
/// ``HandshakeVerdicts``). It can also report when a connection comes up (its handshake succeeded) and goes down.
package enum HandshakeWatch {
    /// Watches `socket` from the loop of `scope`; `onFailure` gets a sentence saying what failed and what to do,
    /// `onConnection`, if given, true when a connection is up and false when it is gone, and `onDrop`, if given, each
    /// handshake cut off that is no verdict. Start it before the socket connects.
    package static func watch(
        _ socket: ZMQSocket, in scope: IOLoopScope, endpoint: String, usesCurve: Bool,
        onConnection: ((Bool) -> Void)? = nil, onDrop: ((MonitorRecord) -> Void)? = nil,
        onFailure: @escaping (String) -> Void
    ) throws {
        var verdicts = HandshakeVerdicts(endpoint: endpoint, usesCurve: usesCurve)
        let monitor = try socket.monitor([
            .handshakeFailedAuth, .handshakeFailedProtocol, .handshakeFailedNoDetail, .handshakeSucceeded, .disconnected,
        ])
        scope.add(monitor.socket) { _ in
            while let record = try monitor.tryReceive() {
                switch verdicts.judge(record) {
                case .connected?: onConnection?(true)
                case .disconnected?: onConnection?(false)
                case .dropped?: onDrop?(record)
                case .refused(let reason)?: onFailure(reason)
                case nil: break
                }
            }
        }
    }
}
