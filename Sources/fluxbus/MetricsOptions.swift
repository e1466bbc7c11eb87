import ArgumentParser
import FluxBus

/// `--metrics-listen`, shared by `coordinator` and `worker`.
struct MetricsOptions: ParsableArguments {
    @Option(name: .customLong("metrics-listen"), help: ArgumentHelp(
        "Serve Prometheus metrics at http://ADDRESS:PORT/metrics, for example 127.0.0.1:9464 (off by default; "
            + "an address other than 127.x is reachable from other machines and logs a warning).",
        valueName: "address:port"))
    var listen: String?

    func validate() throws {
        _ = try endpoint()
    }

    /// The parsed endpoint, or nil when metrics are off.
    func endpoint() throws -> MetricsEndpoint? {
        do {
            return try listen.map(MetricsEndpoint.init(parsing:))
        } catch let error as BusError {
            throw ValidationError(error.message)
        }
    }
}
