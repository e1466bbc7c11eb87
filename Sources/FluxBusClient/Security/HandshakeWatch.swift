import ZeroMQ

/// Reports a failed ZMTP handshake on a connecting socket: a CURVE key the coordinator does not admit, a wrong
/// server key, or plain text against a CURVE coordinator. Without it such a peer would only see silence. It can also
/// report when a connection comes up (its handshake succeeded) and goes down.
package enum HandshakeWatch {
    /// Watches `socket` from the loop of `scope`; `onFailure` gets a sentence saying what failed and what to do, and
    /// `onConnection`, if given, true when a connection is up and false when it is gone. Start it before the socket
    /// connects.
    package static func watch(
        _ socket: ZMQSocket, in scope: IOLoopScope, endpoint: String, onConnection: ((Bool) -> Void)? = nil,
        onFailure: @escaping (String) -> Void
    ) throws {
        let failures: [MonitorEvent] = [.handshakeFailedAuth, .handshakeFailedProtocol, .handshakeFailedNoDetail]
        let monitor = try socket.monitor(failures + (onConnection == nil ? [] : [.handshakeSucceeded, .disconnected]))
        scope.add(monitor.socket) { _ in
            while let record = try monitor.tryReceive() {
                if record.event == .handshakeSucceeded || record.event == .disconnected {
                    onConnection?(record.event == .handshakeSucceeded)
                    continue
                }
                let reason = switch record.event {
                case .handshakeFailedAuth:
                    "the coordinator at \(endpoint) refused this key (ZAP status \(record.value)); list its public key in the coordinator's authorized keys"
                case .handshakeFailedProtocol:
                    "the handshake with \(endpoint) failed (ZMTP protocol error \(record.value)): check that both sides use CURVE (--curve-server-key and --curve-secret-key) or neither"
                default:
                    "the handshake with \(endpoint) failed: check --curve-server-key (the coordinator's public key) and --curve-secret-key"
                }
                onFailure(reason)
            }
        }
    }
}
