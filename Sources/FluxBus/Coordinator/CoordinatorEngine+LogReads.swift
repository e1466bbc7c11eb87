import Logging

/// Reads of the log on the engine's paths. A read that fails must not pass for "the log holds nothing there": that
/// would answer a client, a crash report or a snapshot with something the log never said.
extension CoordinatorEngine {
    /// Runs `read` against the log; a failure is logged at error level, saying what the read was for, and comes back
    /// as the result's failure so the caller can say so in its own answer.
    /// - Parameters:
    ///   - purpose: what the read was for, completing "cannot read the log to …".
    ///   - consequence: what the engine does without it, for the operator.
    ///   - metadata: built only for a failure: every DISPATCH reads the log, and building it first cost a dictionary and
    ///     a string each time.
    func readLog<T>(
        to purpose: String, otherwise consequence: String, _ metadata: @autoclosure () -> Logger.Metadata = [:],
        _ read: (any LogStorage) throws -> T
    ) -> Result<T, any Error> {
        do {
            return .success(try read(log))
        } catch {
            var details = metadata()
            details["error"] = "\(error)"
            logger.error("cannot read the log to \(purpose); \(consequence)", metadata: details)
            return .failure(error)
        }
    }
}
