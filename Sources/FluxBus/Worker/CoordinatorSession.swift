import FluxBusProtocol

/// This worker's standing with the coordinator: the phase of joining, the epoch joined, the HELLO pacing, the
/// heartbeat and deadline the WELCOME set, when the coordinator was last heard, and whether the subscription to its
/// stream has delivered anything.
struct CoordinatorSession {
    /// How a message's epoch relates to the one joined.
    enum EpochCheck {
        /// The epoch joined; `firstOnSubscriber` when this is the first message of it on the stream.
        case current(firstOnSubscriber: Bool)
        /// A newer epoch on the stream: the coordinator restarted, so join it again.
        case newer
        /// Not ours (an older epoch, or the worker is not joined): ignore it.
        case ignored
    }

    /// A HELLO unanswered for this long is sent again.
    static let helloRetry: Duration = .seconds(1)

    private(set) var phase = WorkerEngine.Phase.joining
    private(set) var epoch: UInt64 = 0
    /// How often the worker speaks, and how long the coordinator may stay silent: the WELCOME sets both.
    private(set) var heartbeat: Duration
    private(set) var deadline: Duration
    private var lastHeard: MonotonicTime
    private var lastHelloAt: MonotonicTime?
    /// Whether a message of the current epoch arrived on SUB, proving the subscription works.
    private(set) var heardOnSubscriber = false
    /// The publish endpoint subscribed to, once a WELCOME named it.
    private(set) var subscribedEndpoint: String?

    init(heartbeat: Duration, now: MonotonicTime) {
        self.heartbeat = heartbeat
        self.deadline = heartbeat * BusDefaults.livenessIntervals
        self.lastHeard = now
    }

    /// Whether a HELLO has been sent in this run: the coordinator may know the worker.
    var hasSaidHello: Bool { lastHelloAt != nil }

    /// A HELLO goes out: joining starts (again).
    mutating func saidHello(at now: MonotonicTime) {
        phase = .joining
        lastHelloAt = now
    }

    /// Whether the HELLO sent has gone unanswered long enough to send another.
    func helloOverdue(at now: MonotonicTime) -> Bool {
        lastHelloAt.map { now - $0 >= Self.helloRetry } ?? true
    }

    /// A WELCOME arrived: catching up starts under its epoch and timings.
    /// - Returns: whether it is of another epoch than the one joined before, that is, the coordinator restarted.
    mutating func welcomed(_ welcome: Message.Welcome) -> Bool {
        let restarted = epoch != 0 && epoch != welcome.epoch
        epoch = welcome.epoch
        // Floors keep a careless coordinator from setting timers that spin.
        heartbeat = .milliseconds(Int64(max(welcome.heartbeatMillis, 10)))
        deadline = .milliseconds(Int64(max(welcome.deadlineMillis, 40)))
        heardOnSubscriber = false
        phase = .catchingUp
        return restarted
    }

    /// Records the publish endpoint. - Returns: false when already subscribed there.
    mutating func subscribe(to endpoint: String) -> Bool {
        guard subscribedEndpoint != endpoint else { return false }
        subscribedEndpoint = endpoint
        return true
    }

    /// Checks a message's epoch, and counts a first message of the current one on the stream.
    mutating func check(_ messageEpoch: UInt64, fromSubscriber: Bool) -> EpochCheck {
        guard phase != .joining else { return .ignored }
        if messageEpoch == epoch {
            let first = fromSubscriber && !heardOnSubscriber
            if first { heardOnSubscriber = true }
            return .current(firstOnSubscriber: first)
        }
        return messageEpoch > epoch && phase != .stopped ? .newer : .ignored
    }

    /// A well-formed message arrived from the coordinator.
    mutating func heard(at now: MonotonicTime) { lastHeard = now }

    /// Counts the coordinator's silence from `now`: this worker itself did not run before it.
    mutating func forgiveSilence(until now: MonotonicTime) { lastHeard = max(lastHeard, now) }

    /// How long the coordinator has been silent, if past the deadline. The silence then starts over, so that the
    /// HELLO that follows gets a whole deadline before the next one.
    mutating func silenceBeyondDeadline(at now: MonotonicTime) -> Duration? {
        let silence = now - lastHeard
        guard silence > deadline else { return nil }
        lastHeard = now
        return silence
    }

    /// Caught up with a working subscription: the worker counts in dispatches.
    mutating func wentLive() { phase = .live }

    mutating func stopped() { phase = .stopped }
}
