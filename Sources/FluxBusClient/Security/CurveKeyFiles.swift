import Foundation
import ZeroMQ

#if canImport(Glibc)
import Glibc
#endif

/// CURVE keys on disk: `NAME.key` holds the secret key (mode 0600), `NAME.pub` the public key. Each file has the
/// 40-character Z85 key on its first line that is not a `#` comment.
public enum CurveKeyFiles {
    /// Writes a new key pair as `DIR/NAME.key` (0600) and `DIR/NAME.pub` (0644).
    /// - Returns: the two paths.
    /// - Throws: ``BusError`` (`usage`) for a bad name, an existing file (keys are never overwritten), or a
    ///   directory that cannot be written.
    public static func generate(name: String, directory: String) throws -> (secret: String, public: String) {
        guard BusName.isValid(name) else {
            throw BusError(code: .usage, message: "key name '\(name)' must be 1 to 64 letters, digits, '.', '_' or '-'")
        }
        let pair = try CurveKeyPair.generate()
        let secretPath = (directory as NSString).appendingPathComponent("\(name).key")
        let publicPath = (directory as NSString).appendingPathComponent("\(name).pub")
        for path in [secretPath, publicPath] where FileManager.default.fileExists(atPath: path) {
            throw BusError(code: .usage, message: "\(path) exists; keys are never overwritten: remove it first or choose another name")
        }
        try write("# FluxBus CURVE secret key for \(name); keep it private (mode 0600)\n\(pair.secretKey)\n", to: secretPath, mode: 0o600)
        try write("# FluxBus CURVE public key for \(name); list it in the coordinator's authorized keys\n\(pair.publicKey)\n", to: publicPath, mode: 0o644)
        return (secretPath, publicPath)
    }

    /// Reads a secret key file and derives its public key.
    /// - Throws: ``BusError`` (`usage`) when the file is missing, readable by group or others, or malformed.
    public static func loadSecret(_ path: String) throws -> CurveKeyPair {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw BusError(code: .usage, message: "cannot read the secret key file \(path): \(String(cString: strerror(errno)))")
        }
        guard info.st_mode & 0o077 == 0 else {
            throw BusError(
                code: .usage,
                message: "the secret key file \(path) is readable by others (mode \(String(info.st_mode & 0o777, radix: 8))); "
                    + "run `chmod 600 \(path)` and consider the key exposed: make a new one with `fluxbus keygen`")
        }
        let key = try readKey(path, kind: "secret")
        do {
            return try CurveKeyPair(secretKey: key)
        } catch {
            throw BusError(code: .usage, message: "the secret key file \(path) does not hold a valid CURVE key: \(error)")
        }
    }

    /// A public key given directly (40 Z85 characters) or as the path of a `.pub` file.
    /// - Throws: ``BusError`` (`usage`) when it is neither.
    public static func loadPublic(_ keyOrPath: String) throws -> String {
        if isZ85Key(keyOrPath) { return keyOrPath }
        return try readKey(keyOrPath, kind: "public")
    }

    static func isZ85Key(_ text: String) -> Bool {
        let alphabet = Set("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#")
        return text.count == 40 && text.allSatisfy(alphabet.contains)
    }

    private static func readKey(_ path: String, kind: String) throws -> String {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw BusError(code: .usage, message: "cannot read the \(kind) key file \(path); check the path (make keys with `fluxbus keygen NAME`)")
        }
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        guard let key = lines.first(where: { !$0.isEmpty && !$0.hasPrefix("#") }), isZ85Key(key) else {
            throw BusError(code: .usage, message: "the \(kind) key file \(path) is malformed: expected a 40-character Z85 key, as `fluxbus keygen` writes")
        }
        return key
    }

    private static func write(_ text: String, to path: String, mode: mode_t) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL, mode)
        guard descriptor >= 0 else {
            throw BusError(code: .usage, message: "cannot create \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        let bytes = Array(text.utf8)
        guard bytes.withUnsafeBytes({ Glibc.write(descriptor, $0.baseAddress, $0.count) }) == bytes.count else {
            throw BusError(code: .usage, message: "cannot write \(path): \(String(cString: strerror(errno)))")
        }
        fchmod(descriptor, mode)  // the umask must not widen or narrow what was asked for
    }
}
