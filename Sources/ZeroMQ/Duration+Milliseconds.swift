extension Duration {
    /// The duration in whole milliseconds, rounded up so that a short positive wait never becomes a busy `0`,
    /// clamped to `0...Int.max`. libzmq takes every time in milliseconds.
    package var roundedUpMilliseconds: Int {
        let (seconds, attoseconds) = components
        if seconds < 0 || (seconds == 0 && attoseconds <= 0) { return 0 }
        let attosecondsPerMillisecond: Int64 = 1_000_000_000_000_000
        let (wholeMillis, rest) = attoseconds.quotientAndRemainder(dividingBy: attosecondsPerMillisecond)
        let (fromSeconds, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        if overflow { return Int.max }
        let (total, overflow2) = fromSeconds.addingReportingOverflow(wholeMillis + (rest > 0 ? 1 : 0))
        return overflow2 ? Int.max : Int(total)
    }

    /// The duration in whole seconds, rounded up, for the TCP keepalive options.
    var roundedUpSeconds: Int {
        let milliseconds = roundedUpMilliseconds
        return milliseconds / 1000 + (milliseconds % 1000 > 0 ? 1 : 0)
    }

    /// ``roundedUpMilliseconds`` clamped to `Int32`, the width of libzmq's time options.
    var optionMilliseconds: Int32 { Int32(clamping: roundedUpMilliseconds) }
}
