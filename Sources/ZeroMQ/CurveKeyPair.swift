import CZMQ

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A CURVE key pair: two 40-character Z85 strings.
///
/// A CURVE server sets ``SocketOption/curveServer``, its ``SocketOption/curveSecretKey`` and (for its ZAP handler's
/// sake) its public key; a client sets its own pair and the server's public key as ``SocketOption/curveServerKey``.
/// The description shows the public key only.
///
/// ```swift
/// let server = try CurveKeyPair.generate()
/// try router.set(.curveServer, to: true)
/// try router.set(.curveSecretKey, to: server.secretKey)
///
/// let client = try CurveKeyPair.generate()
/// try dealer.set(.curveServerKey, to: server.publicKey)
/// try dealer.set(.curvePublicKey, to: client.publicKey)
/// try dealer.set(.curveSecretKey, to: client.secretKey)
/// ```
public struct CurveKeyPair: Sendable, Hashable, CustomStringConvertible {
    /// The public key, 40 Z85 characters; safe to share.
    public let publicKey: String
    /// The secret key, 40 Z85 characters; keep it private.
    public let secretKey: String

    /// Rebuilds a key pair from a stored secret key.
    ///
    /// - Throws: ``ZMQError``: `EINVAL` if `secretKey` is not 40 Z85 characters, `ENOTSUP` without CURVE.
    public init(secretKey: String) throws(ZMQError) {
        self.publicKey = try Self.derivePublicKey(fromSecret: secretKey)
        self.secretKey = secretKey
    }

    private init(publicKey: String, secretKey: String) {
        self.publicKey = publicKey
        self.secretKey = secretKey
    }

    /// Generates a fresh key pair (`zmq_curve_keypair`).
    ///
    /// - Throws: ``ZMQError`` with `ENOTSUP` if libzmq was built without CURVE (see ``ZeroMQVersion/hasCurve``).
    public static func generate() throws(ZMQError) -> CurveKeyPair {
        var publicKey = [CChar](repeating: 0, count: 41)
        var secretKey = [CChar](repeating: 0, count: 41)
        try ZMQError.check("generate a CURVE key pair") { zmq_curve_keypair(&publicKey, &secretKey) }
        return CurveKeyPair(
            publicKey: String(zeroTerminated: publicKey), secretKey: String(zeroTerminated: secretKey))
    }

    /// Computes the public key that belongs to a secret key (`zmq_curve_public`).
    ///
    /// - Throws: ``ZMQError``: `EINVAL` if `secretKey` is not 40 Z85 characters, `ENOTSUP` without CURVE.
    public static func derivePublicKey(fromSecret secretKey: String) throws(ZMQError) -> String {
        guard secretKey.utf8.count == 40, Z85.decode(secretKey) != nil else {
            throw ZMQError(errno: EINVAL, operation: "derive a CURVE public key: the secret key must be 40 Z85 "
                + "characters, got \(secretKey.utf8.count) characters")
        }
        var publicKey = [CChar](repeating: 0, count: 41)
        try ZMQError.check("derive a CURVE public key") { zmq_curve_public(&publicKey, secretKey) }
        return String(zeroTerminated: publicKey)
    }

    public var description: String { "CurveKeyPair(publicKey: \(publicKey), secretKey: <redacted>)" }
}
