import ZeroMQ

/// CURVE for a coordinator: its key pair, and the keys it admits through its ZAP handler.
public struct CoordinatorSecurity: Sendable {
    public let keyPair: CurveKeyPair
    public let authorizedKeys: AuthorizedKeys

    public init(keyPair: CurveKeyPair, authorizedKeys: AuthorizedKeys) {
        self.keyPair = keyPair
        self.authorizedKeys = authorizedKeys
    }

    /// The ZAP domain the coordinator's sockets use.
    package static let domain = "fluxbus"
}

/// CURVE for a worker or client: the coordinator's public key, and this peer's own key pair.
public struct PeerSecurity: Sendable {
    public let serverPublicKey: String
    public let keyPair: CurveKeyPair

    public init(serverPublicKey: String, keyPair: CurveKeyPair) {
        self.serverPublicKey = serverPublicKey
        self.keyPair = keyPair
    }

    /// Sets the client side of CURVE on a socket, before it connects.
    package func apply(to socket: ZMQSocket) throws {
        try socket.set(.curveServerKey, to: serverPublicKey)
        try socket.set(.curvePublicKey, to: keyPair.publicKey)
        try socket.set(.curveSecretKey, to: keyPair.secretKey)
    }
}
