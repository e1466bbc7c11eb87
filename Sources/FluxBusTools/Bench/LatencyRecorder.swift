import Histogram

/// Latencies of one scenario in nanoseconds, kept in an HDR histogram (three significant digits, 1 ns to 100 s).
///
/// ```swift
/// var recorder = LatencyRecorder()
/// recorder.record(nanoseconds: 42_000)
/// print(recorder.summary.p99)
/// ```
public struct LatencyRecorder: Sendable {
    private var histogram = Histogram<UInt64>(lowestDiscernibleValue: 1, highestTrackableValue: 100_000_000_000,
                                              numberOfSignificantValueDigits: .three)

    public init() {}

    /// Records one latency; values past 100 s are clamped to it.
    public mutating func record(nanoseconds: UInt64) {
        _ = histogram.record(min(max(nanoseconds, 1), histogram.highestTrackableValue))
    }

    /// Records one elapsed duration.
    public mutating func record(_ duration: Duration) {
        record(nanoseconds: UInt64(max(0, duration.nanoseconds)))
    }

    public var count: UInt64 { histogram.totalCount }

    /// The percentiles that every report prints.
    public var summary: LatencySummary {
        func micros(_ percentile: Double) -> Double { Double(histogram.valueAtPercentile(percentile)) / 1_000 }
        return LatencySummary(
            count: Int(histogram.totalCount), p50: micros(50), p90: micros(90), p99: micros(99), p999: micros(99.9),
            max: Double(histogram.max) / 1_000, mean: histogram.mean / 1_000)
    }
}

/// Latency percentiles in microseconds.
public struct LatencySummary: Sendable, Codable, Hashable {
    public let count: Int
    public let p50: Double
    public let p90: Double
    public let p99: Double
    public let p999: Double
    public let max: Double
    public let mean: Double
}
