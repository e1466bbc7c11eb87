import Flux
import Foundation

/// The command line of a worker executable built on ``WorkerMain``: the options `fluxbus worker` takes for the stores
/// a program declares. A hand-written parser, so that a user's worker does not link swift-argument-parser.
public struct WorkerOptions: Sendable, Hashable {
    /// `--id`: the worker's id, stable across restarts and unique on the bus.
    public var id: String
    /// `--coordinator`: the control endpoint; by default `$FLUXBUS_COORDINATOR`, then `tcp://127.0.0.1:7401`.
    public var coordinator: String
    /// `--store`, repeated: the names of the program's stores to host; empty hosts all of them.
    public var stores: [String] = []
    /// `--data-dir`: keep a checkpoint there and resume from it on restart.
    public var dataDirectory: String?
    /// `--checkpoint-ms`: how often to rewrite the checkpoint when something changed.
    public var checkpointMillis = 1_000
    /// `--curve-server-key` and `--curve-secret-key`: CURVE with the coordinator, both or neither.
    public var curveServerKey: String?
    public var curveSecretKey: String?
    /// `--log-level` (trace … critical) and `--log-format` (text or json).
    public var logLevel = "info"
    public var logFormat = "text"

    public init(id: String, coordinator: String) {
        self.id = id
        self.coordinator = coordinator
    }

    /// Reads `arguments` (without the program's name).
    /// - Returns: the options, or nil when they ask for `--help`.
    /// - Throws: `BusError` `usage` for an unknown option, a missing value or `--id`, or a value out of range.
    public static func parse(
        _ arguments: [String], environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> WorkerOptions? {
        var options = WorkerOptions(
            id: "", coordinator: environment[BusDefaults.coordinatorEnvironmentVariable] ?? BusDefaults.controlEndpoint)
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            if argument == "--help" || argument == "-h" { return nil }
            // `--name=value` or `--name value`.
            let parts = argument.split(separator: "=", maxSplits: 1).map(String.init)
            guard argument.hasPrefix("--"), let name = parts.first else {
                throw usage("unexpected argument `\(argument)`")
            }
            func value() throws -> String {
                if parts.count == 2 { return parts[1] }
                guard let next = rest.popFirst(), !next.hasPrefix("--") else { throw usage("\(name) needs a value") }
                return next
            }
            switch name {
            case "--id": options.id = try value()
            case "--coordinator": options.coordinator = try value()
            case "--store": options.stores.append(try value())
            case "--data-dir": options.dataDirectory = try value()
            case "--checkpoint-ms":
                let text = try value()
                guard let millis = Int(text), millis > 0 else { throw usage("--checkpoint-ms must be a positive number, not `\(text)`") }
                options.checkpointMillis = millis
            case "--curve-server-key": options.curveServerKey = try value()
            case "--curve-secret-key": options.curveSecretKey = try value()
            case "--log-level": options.logLevel = try value()
            case "--log-format": options.logFormat = try value()
            default: throw usage("unknown option `\(name)`")
            }
        }
        guard !options.id.isEmpty else { throw usage("give the worker's id: --id ID") }
        guard ["trace", "debug", "info", "notice", "warning", "error", "critical"].contains(options.logLevel) else {
            throw usage("unknown log level `\(options.logLevel)`; use trace, debug, info, notice, warning, error or critical")
        }
        guard ["text", "json"].contains(options.logFormat) else {
            throw usage("unknown log format `\(options.logFormat)`; use text or json")
        }
        return options
    }

    /// The stores to host: all of `available`, or those `--store` names, each of which must be one of them.
    public func hosted(from available: [any Store.Type]) throws -> [HostedStore] {
        guard !stores.isEmpty else { return available.map { HostedStore($0) } }
        var hosted: [HostedStore] = []
        for name in stores {
            guard let type = available.first(where: { HostedStore($0).effectiveName == name }) else {
                let names = available.map { HostedStore($0).effectiveName }
                throw usage("this worker has no store `\(name)`; its stores are \(names.joined(separator: ", "))")
            }
            hosted.append(HostedStore(type))
        }
        return hosted
    }

    /// CURVE settings from the two key options, or nil for plain text.
    public func security() throws -> PeerSecurity? {
        switch (curveServerKey, curveSecretKey) {
        case (nil, nil): return nil
        case (let server?, let secret?):
            return PeerSecurity(serverPublicKey: try CurveKeyFiles.loadPublic(server), keyPair: try CurveKeyFiles.loadSecret(secret))
        default: throw usage("CURVE needs both --curve-server-key and --curve-secret-key")
        }
    }

    private static func usage(_ message: String) -> BusError {
        BusError(code: .usage, message: "\(message) (see --help)")
    }

    private func usage(_ message: String) -> BusError { Self.usage(message) }
}
