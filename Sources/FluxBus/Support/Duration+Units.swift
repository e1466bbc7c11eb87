extension Duration {
    /// Whole milliseconds, rounded down; saturating far beyond any timeout.
    var milliseconds: Int64 { wholeUnits(perSecond: 1_000) }

    /// Whole microseconds, rounded down; saturating far beyond any timeout.
    var microseconds: Int64 { wholeUnits(perSecond: 1_000_000) }

    /// Whole nanoseconds; saturating far beyond any timeout.
    var nanosecondsClamped: Int64 { wholeUnits(perSecond: 1_000_000_000) }

    /// Truncated toward zero, as `components` would give them, from the 128-bit count directly: `components` cost
    /// some 220 instructions of 128-bit arithmetic and this about 90, on the path of every dispatch (issue 17).
    private func wholeUnits(perSecond: Int64) -> Int64 {
        Int64(clamping: attoseconds / Int128(1_000_000_000_000_000_000 / perSecond))
    }
}
