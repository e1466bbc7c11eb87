extension Duration {
    /// Whole milliseconds, rounded down; saturating far beyond any timeout.
    var milliseconds: Int64 { wholeUnits(perSecond: 1_000) }

    /// Whole microseconds, rounded down; saturating far beyond any timeout.
    var microseconds: Int64 { wholeUnits(perSecond: 1_000_000) }

    /// Whole nanoseconds; saturating far beyond any timeout.
    var nanosecondsClamped: Int64 { wholeUnits(perSecond: 1_000_000_000) }

    private func wholeUnits(perSecond: Int64) -> Int64 {
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: perSecond)
        guard !overflow else { return seconds < 0 ? .min : .max }
        return scaled &+ attoseconds / (1_000_000_000_000_000_000 / perSecond)
    }
}
