import FluxBusProtocol

/// What the coordinator has that this worker lacks, and the FETCHes that bring it: the newest sequence it was told
/// about, the newest it was told completed, and the pacing that keeps one FETCH from being sent over and over.
struct CatchUp {
    /// At most this many sequences per FETCH, by default. The coordinator answers the whole range at once, in several
    /// REPLAYs, so a replica catching up waits one round trip per window instead of one per REPLAY.
    static let defaultWindow: UInt64 = 8_192
    /// At most this many sequences per FETCH (the simulator uses small ones, to catch up in many windows).
    let window: UInt64
    /// A FETCH is sent again once this long has passed without a REPLAY, not before. Counted from the last REPLAY, not
    /// from the FETCH: a window of slow handlers takes longer than this to apply, and asking again for what is still
    /// arriving would have the coordinator read and send it twice.
    static let retryAfter: Duration = .seconds(1)

    /// The newest sequence the coordinator has told us about (ACTION, HEARTBEAT, COMPLETED, WELCOME).
    private(set) var knownSequence: UInt64 = 0
    /// The newest sequence the coordinator has told us completed: it never asks for an acknowledgement of it or of one
    /// before it again, restarted or not (a COMPLETED goes out only once its record is durable).
    private(set) var knownCompleted: UInt64 = 0
    /// When the FETCH still unanswered was sent, or the last REPLAY arrived since.
    private var fetchSentAt: MonotonicTime?
    /// The end of the range the last FETCH asked for.
    private var fetchingThrough: UInt64 = 0
    /// The worker's applied sequence when it sent that FETCH.
    private(set) var appliedWhenAsked: UInt64 = 0
    /// A FETCH sent ahead, for the completed window after `fetchingThrough`, while that one's answer is arriving: the
    /// coordinator then reads the next window while the worker applies this one, instead of each waiting for the other.
    private var aheadThrough: UInt64?
    /// How many FETCHes went ahead, for the simulator's report.
    private(set) var fetchesAhead = 0

    init(window: UInt64 = Self.defaultWindow) {
        self.window = window
    }

    /// A sequence was published, or named as the newest.
    mutating func heard(of sequence: UInt64) {
        knownSequence = max(knownSequence, sequence)
    }

    /// A sequence completed.
    mutating func heardCompleted(_ sequence: UInt64) {
        heard(of: sequence)
        knownCompleted = max(knownCompleted, sequence)
    }

    /// A WELCOME named the last completed sequence. After a coordinator restart what the previous run announced may
    /// never have been logged as completed: the new run's word counts.
    mutating func welcomed(at sequence: UInt64, restarted: Bool) {
        if restarted {
            knownSequence = sequence
            knownCompleted = sequence
        }
        heardCompleted(sequence)
    }

    /// For a report: what is known and asked for.
    var summary: String {
        "known #\(knownSequence), completed #\(knownCompleted), fetching through #\(fetchingThrough)"
            + (fetchSentAt.map { " since \($0)" } ?? "")
    }

    /// Whether nothing is known beyond `applied`.
    func isCaughtUp(applied: UInt64) -> Bool { applied >= knownSequence }

    /// The range to FETCH now, if any. A dispatch in hand completed without us when the coordinator says so; and one
    /// that has waited `patience` may have (its COMPLETED lost, and a HEARTBEAT names only what was published): fetch
    /// it. If it completed, its record settles it; if it is still in flight, the coordinator sends its ACTION again
    /// with the outcomes it released, which a lost RELEASE needs. With nothing in hand, fetch what follows `applied`.
    func wanted(
        applied: UInt64, inHand: (sequence: UInt64, begunAt: MonotonicTime)?, now: MonotonicTime, patience: Duration
    ) -> ClosedRange<UInt64>? {
        if let inHand {
            let overtaken = knownCompleted >= inHand.sequence || now - inHand.begunAt > patience
            guard overtaken else { return nil }
            return inHand.sequence...min(max(knownSequence, inHand.sequence), inHand.sequence + window)
        }
        guard knownSequence > applied else { return nil }
        return (applied + 1)...min(knownSequence, applied + window)
    }

    /// Whether a FETCH through `last` may go now, with `applied` applied; if so, it counts as sent. One FETCH is
    /// outstanding at a time: until the REPLAY that ends its answer, or `retryAfter` if that never comes.
    mutating func mayFetch(through last: UInt64, applied: UInt64, at now: MonotonicTime) -> Bool {
        if let sent = fetchSentAt, now - sent < Self.retryAfter { return false }
        fetchSentAt = now
        fetchingThrough = last
        appliedWhenAsked = applied
        return true
    }

    /// The range to FETCH ahead now, if any; if so, it counts as sent. Only while an answer is arriving, only one at
    /// a time, and only sequences the coordinator said completed: a FETCH for one still in flight would have its ACTION
    /// sent again.
    mutating func fetchAhead() -> ClosedRange<UInt64>? {
        guard fetchSentAt != nil, aheadThrough == nil, knownCompleted > fetchingThrough else { return nil }
        let range = (fetchingThrough + 1)...min(knownCompleted, fetchingThrough + window)
        aheadThrough = range.upperBound
        fetchesAhead += 1
        return range
    }

    /// A REPLAY arrived: the FETCH outstanding is being answered, so its wait for a retry starts again.
    mutating func answerArriving(at now: MonotonicTime) {
        if fetchSentAt != nil { fetchSentAt = now }
    }

    /// The REPLAY that ends a FETCH's answer arrived at `now`, and the worker has applied what it brought: `applied`
    /// now. The FETCH sent ahead, if any, is the one outstanding from here, its wait starting now: its answer queued
    /// behind this one. Otherwise an answer that moved the worker on lets the next FETCH go at once; one that brought
    /// nothing new keeps the pacing, so that a worker never asks in a loop for what the coordinator has not completed
    /// yet.
    mutating func answerEnded(applied: UInt64, at now: MonotonicTime) {
        if let next = aheadThrough {
            aheadThrough = nil
            fetchSentAt = now
            fetchingThrough = next
            appliedWhenAsked = applied
            return
        }
        if applied > appliedWhenAsked { fetchSentAt = nil }
    }

    /// Something answered the FETCH outright (a SNAPSHOT): the next may go at once. One sent ahead is forgotten; its
    /// answer, if any comes, is applied like any other REPLAY.
    mutating func answered() {
        fetchSentAt = nil
        aheadThrough = nil
    }

    /// Whether the FETCH sent has gone unanswered too long; if so, it is forgotten with any sent ahead, and catching
    /// up may send another.
    mutating func fetchOverdue(at now: MonotonicTime) -> Bool {
        guard let sent = fetchSentAt, now - sent >= Self.retryAfter else { return false }
        fetchSentAt = nil
        aheadThrough = nil
        return true
    }
}
