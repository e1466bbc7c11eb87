import Testing

@testable import FluxBus

/// A snapshot round reads and stores every store's whole state, so rounds come no more often than the log grows by
/// what the last snapshots hold: compaction's cost stays within the log's own, however large the state.
@Suite struct SnapshotRoundsTests {
    @Test func aLargeStateIsSnapshottedOnlyOnceTheLogHasGrownByItsSize() {
        let start = MonotonicTime.zero
        var rounds = SnapshotRounds(retain: 100, now: start)
        // Past retention by a quarter, no snapshot yet: due.
        for _ in 0..<200 { rounds.logged(payloadBytes: 100) }
        #expect(rounds.isDue(at: start, lastCompleted: 200, oldestRetained: 1, snapshotBytes: 0))
        _ = rounds.begin(asking: [("kv", "w1")], until: start.advanced(by: .seconds(5)))
        _ = rounds.answer("snapshot-1")
        let ended = rounds.endIfOver(at: start.advanced(by: .seconds(1)), receiving: false)
        #expect(ended)

        // The snapshot it took holds 1 MB; the log has grown by 200 entries of ~164 bytes since: not yet due, though
        // past retention by far.
        let later = start.advanced(by: .seconds(10))
        for _ in 0..<200 { rounds.logged(payloadBytes: 100) }
        #expect(!rounds.isDue(at: later, lastCompleted: 400, oldestRetained: 100, snapshotBytes: 1_000_000))
        // Once the log has taken as many bytes as the snapshot holds, it is.
        for _ in 0..<6_000 { rounds.logged(payloadBytes: 100) }
        #expect(rounds.isDue(at: later, lastCompleted: 6_400, oldestRetained: 100, snapshotBytes: 1_000_000))
        // A small state changes nothing: a quarter past retention suffices.
        #expect(rounds.isDue(at: later, lastCompleted: 6_400, oldestRetained: 100, snapshotBytes: 100))
        #expect(!rounds.isDue(at: later, lastCompleted: 220, oldestRetained: 100, snapshotBytes: 100))
    }
}
