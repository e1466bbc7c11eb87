import CoreMetrics
import Prometheus

/// One process's metrics: a Prometheus registry of its own (no global bootstrap, so that tests may run several
/// coordinators and workers in one process), a swift-metrics factory over it, and the histogram buckets FluxBus uses.
final class MetricsRegistry: Sendable {
    let prometheus = PrometheusCollectorRegistry()
    let factory: PrometheusMetricsFactory

    /// From 50 µs to 10 s: a dispatch on one machine takes about 100 µs, an fsync about a millisecond.
    static let durationBuckets: [Duration] = [
        .microseconds(50), .microseconds(100), .microseconds(250), .microseconds(500), .milliseconds(1),
        .microseconds(2500), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50),
        .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(2500), .seconds(10),
    ]

    init() {
        var factory = PrometheusMetricsFactory(registry: prometheus)
        factory.defaultDurationHistogramBuckets = Self.durationBuckets
        self.factory = factory
    }

    /// The exposition text, for `GET /metrics`.
    func render() -> [UInt8] { prometheus.emitToBuffer() }

    func counter(_ name: String, _ dimensions: [(String, String)] = []) -> CoreMetrics.Counter {
        CoreMetrics.Counter(label: name, dimensions: dimensions, factory: factory)
    }

    func gauge(_ name: String, _ dimensions: [(String, String)] = []) -> CoreMetrics.Gauge {
        CoreMetrics.Gauge(label: name, dimensions: dimensions, factory: factory)
    }

    func timer(_ name: String, _ dimensions: [(String, String)] = []) -> CoreMetrics.Timer {
        CoreMetrics.Timer(label: name, dimensions: dimensions, factory: factory)
    }
}

/// Gauges made on first use for label values known only at run time (a worker's id, a store's name). Only sampled
/// figures use it, about once a second, never per dispatch.
struct LabeledGauges {
    let name: String
    let labels: [String]
    private var gauges: [[String]: CoreMetrics.Gauge] = [:]

    init(_ name: String, labels: [String]) {
        self.name = name
        self.labels = labels
    }

    mutating func set(_ values: [String], to value: Double, in registry: MetricsRegistry) {
        if let gauge = gauges[values] { return gauge.record(value) }
        let gauge = registry.gauge(name, Array(zip(labels, values)))
        gauges[values] = gauge
        gauge.record(value)
    }

    /// Drops the series of every gauge not in `seen` from the exposition: a worker that left has no lag any more,
    /// rather than its last one for ever.
    mutating func removeAll(except seen: Set<[String]>) {
        for (values, gauge) in gauges where !seen.contains(values) {
            gauge.destroy()
            gauges[values] = nil
        }
    }
}
