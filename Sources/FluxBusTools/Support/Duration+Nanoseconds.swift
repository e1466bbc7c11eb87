extension Duration {
    /// Nanoseconds as a floating-point number, for benchmarks.
    var nanoseconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) * 1e9 + Double(attoseconds) / 1e9
    }
}
