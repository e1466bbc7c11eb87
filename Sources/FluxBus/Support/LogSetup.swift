import Logging

/// The process-wide logging setup shared by `fluxbus` and ``WorkerMain``: a level, and text or JSON lines on
/// standard error.
package enum LogSetup {
    /// Bootstraps swift-log once for the process and returns a logger labelled `label`.
    package static func bootstrap(label: String, level: String, format: String) -> Logger {
        let level = Logger.Level(rawValue: level) ?? .info
        let json = format == "json"
        LoggingSystem.bootstrap { label in
            if json {
                var handler = JSONLogHandler(label: label)
                handler.logLevel = level
                return handler
            }
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        return Logger(label: label)
    }
}
