import Testing

@testable import FluxBus

/// The shells' and engines' conversions of a `Duration` to whole units, which read its 128-bit count directly.
@Suite("Duration in whole units")
struct DurationUnitsTests {
    /// What `components` gives, truncated toward zero like the conversions.
    static func reference(_ duration: Duration, perSecond: Int64) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * perSecond + attoseconds / (1_000_000_000_000_000_000 / perSecond)
    }

    @Test func wholeUnitsAgreeWithTheComponents() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            let duration = Duration.nanoseconds(Int64.random(in: -10_000_000_000_000...10_000_000_000_000, using: &generator))
                + .init(secondsComponent: 0, attosecondsComponent: Int64.random(in: -999_999_999...999_999_999, using: &generator))
            #expect(duration.milliseconds == Self.reference(duration, perSecond: 1_000), "\(duration)")
            #expect(duration.microseconds == Self.reference(duration, perSecond: 1_000_000), "\(duration)")
            #expect(duration.nanosecondsClamped == Self.reference(duration, perSecond: 1_000_000_000), "\(duration)")
        }
    }

    @Test func partsOfAUnitAreDroppedTowardZero() {
        #expect(Duration.microseconds(1_999).milliseconds == 1)
        #expect(Duration.microseconds(-1_999).milliseconds == -1)
        #expect(Duration.nanoseconds(999).microseconds == 0)
    }

    @Test func durationsBeyondSixtyFourBitsOfNanosecondsSaturate() {
        #expect(Duration.seconds(Int64.max).nanosecondsClamped == .max)
        #expect(Duration.seconds(Int64.min).nanosecondsClamped == .min)
        #expect(Duration.seconds(Int64.max).milliseconds == .max)
        #expect(Duration.seconds(10_000_000_000).nanosecondsClamped == .max)
    }
}
