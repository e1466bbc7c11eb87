import ZeroMQ

/// Tells a verdict on this peer's configuration from a connection that merely dropped, among the handshake events of
/// a connecting socket (as libzmq 4.3 reports them to that side, shown by ZeroMQTests' `ClientHandshakeEventTests`):
///
/// - `handshakeFailedAuth`: the coordinator's ZAP handler refused this key. A verdict.
/// - `handshakeFailedProtocol`: the two sides' mechanisms differ (plain text against CURVE, either way). A verdict.
/// - `handshakeFailedNoDetail`: the connection closed mid-handshake. A coordinator that dies (or is killed)
///   between accepting and greeting does that, and libzmq simply reconnects: no verdict, whatever waits goes on
///   waiting. But a CURVE server that cannot read the HELLO, sealed for another key, closes it the same way: a wrong
///   `--curve-server-key` shows as nothing else. So on a CURVE socket that has never completed a handshake,
///   ``dropsMeaningWrongServerKey`` drops in a row count as that verdict: a coordinator dying mid-handshake that
///   many times in a row, and never once letting the handshake through, is far less likely than a wrong key. Once a
///   handshake has succeeded the server key is known to be right, and drops are only drops.
package struct HandshakeVerdicts {
    /// Dropped handshakes in a row, on a CURVE socket that never completed one, that mean a wrong server key.
    package static let dropsMeaningWrongServerKey = 3

    package enum Judgement: Equatable {
        /// A handshake succeeded: a connection is up.
        case connected
        /// A connection went down.
        case disconnected
        /// A connection dropped mid-handshake; libzmq reconnects.
        case dropped
        /// The handshake failed for good; the sentence says what failed and what to do.
        case refused(String)
    }

    let endpoint: String
    /// Whether the socket uses CURVE, the one mechanism whose wrong key shows as a drop.
    let usesCurve: Bool
    private(set) var everSucceeded = false
    private(set) var dropsInARow = 0

    package init(endpoint: String, usesCurve: Bool) {
        self.endpoint = endpoint
        self.usesCurve = usesCurve
    }

    /// What `record` means; nil for an event that says nothing of handshakes.
    package mutating func judge(_ record: MonitorRecord) -> Judgement? {
        switch record.event {
        case .handshakeSucceeded:
            everSucceeded = true
            dropsInARow = 0
            return .connected
        case .disconnected:
            return .disconnected
        case .handshakeFailedAuth:
            return .refused("the coordinator at \(endpoint) refused this key (ZAP status \(record.value)); list its public key "
                + "in the coordinator's authorized keys")
        case .handshakeFailedProtocol:
            return .refused("the handshake with \(endpoint) failed (ZMTP protocol error \(record.value)): check that both "
                + "sides use CURVE (--curve-server-key and --curve-secret-key) or neither")
        case .handshakeFailedNoDetail:
            dropsInARow += 1
            guard usesCurve, !everSucceeded, dropsInARow >= Self.dropsMeaningWrongServerKey else { return .dropped }
            return .refused("the handshake with \(endpoint) failed: the coordinator closed the connection \(dropsInARow) "
                + "times in a row before it completed; check --curve-server-key (the coordinator's public key) and "
                + "--curve-secret-key")
        default:
            return nil
        }
    }
}
