import Foundation
import FluxBus

/// Defaults for every command, from a JSON file, so that users need not repeat flags.
///
/// The file is `$FLUXBUS_CONFIG` if set, otherwise `$XDG_CONFIG_HOME/fluxbus/config.json`, otherwise
/// `~/.config/fluxbus/config.json`; a missing file is fine, unless `$FLUXBUS_CONFIG` names it. Every key is optional:
/// ```json
/// {"coordinator": "tcp://10.0.0.5:7401", "timeout": 5, "logLevel": "info", "logFormat": "json",
///  "curveServerKey": "/etc/fluxbus/coordinator.pub", "curveSecretKey": "/home/me/.config/fluxbus/me.key"}
/// ```
/// A flag beats `FLUXBUS_COORDINATOR`, which beats the file, which beats the built-in default.
struct CLIConfig: Decodable {
    var coordinator: String?
    var timeout: Double?
    var logLevel: String?
    var logFormat: String?
    var curveServerKey: String?
    var curveSecretKey: String?

    static let path: String = {
        let environment = ProcessInfo.processInfo.environment
        if let path = environment["FLUXBUS_CONFIG"] { return path }
        let base = environment["XDG_CONFIG_HOME"] ?? (NSHomeDirectory() + "/.config")
        return base + "/fluxbus/config.json"
    }()

    /// The file's settings, or none when there is no file.
    /// - Throws: ``BusError`` (`usage`) naming the file when it exists but is not valid.
    static func load() throws -> CLIConfig {
        guard let data = FileManager.default.contents(atPath: path) else {
            // A file named on purpose that is not there is a mistake; the default place may well be empty.
            if let named = ProcessInfo.processInfo.environment["FLUXBUS_CONFIG"] {
                throw BusError(code: .usage, message: "FLUXBUS_CONFIG names \(named), which cannot be read (missing, or not "
                    + "readable); fix the path, or unset FLUXBUS_CONFIG to use the defaults")
            }
            return CLIConfig()
        }
        do {
            return try JSONDecoder().decode(CLIConfig.self, from: data)
        } catch {
            throw BusError(
                code: .usage,
                message: "the config file \(path) is not valid: \(error). Expected JSON such as "
                    + #"{"coordinator": "tcp://127.0.0.1:7401", "timeout": 10, "logLevel": "info", "logFormat": "text"}"#
                    + "; fix it, or point FLUXBUS_CONFIG elsewhere")
        }
    }
}
