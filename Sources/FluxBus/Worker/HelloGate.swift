/// Which of the engine's HELLOs a worker's DEALER takes (docs/PROTOCOL.md, "Repeated HELLOs").
///
/// A DEALER queues what is sent while it has no connection and delivers all of it when one comes up, so a HELLO
/// re-sent every second through an outage would bring one WELCOME (and one catch-up) per second of it. One queued
/// HELLO is enough: a joining worker applies nothing, so what its HELLO says does not change. And the engine retries a
/// HELLO a second after it *made* the last one, not after it left: the held HELLO leaves when the connection comes up,
/// so for a second after that, or until the coordinator answers, it is the HELLO in flight and no other goes.
///
/// A value with the time given by its caller: the worker's shell keeps one, and the simulator's workers keep one each,
/// so that the simulation tests run the rule the real worker runs.
struct HelloGate {
    enum Verdict: Equatable {
        /// Send it.
        case send
        /// A HELLO is queued already and goes when the connection comes up.
        case alreadyQueued
        /// The HELLO held through the outage left this long ago; its WELCOME may be on the way.
        case heldHelloInFlight(since: Duration)
    }

    /// Whether sends without a connection wait in the DEALER. Over `inproc://`, which has no handshake for a monitor
    /// to report, nothing is held back.
    let holdsQueuedHellos: Bool
    /// Whether the DEALER has a connection up: its monitor said so, or a message came through it.
    private var isConnected = false
    private var helloQueued = false
    /// When the HELLO held through an outage went out, as the connection came up.
    private var heldHelloLeftAt: MonotonicTime?
    #if DEBUG
    /// Planted for the simulation tests: the held HELLO does not count as sent when it leaves (the rule before
    /// `5887d5b`), so a retry can follow it before its WELCOME comes back.
    var forgetsTheHeldHello = false
    #endif

    init(holdsQueuedHellos: Bool) {
        self.holdsQueuedHellos = holdsQueuedHellos
    }

    /// The DEALER's connection came up or went down.
    mutating func connectionChanged(up: Bool, at now: MonotonicTime) {
        heldHelloLeftAt = up && !isConnected && helloQueued ? now : nil
        #if DEBUG
        if forgetsTheHeldHello { heldHelloLeftAt = nil }
        #endif
        isConnected = up
        if up { helloQueued = false }
    }

    /// A message came through the DEALER: its connection is up, and the coordinator is past any HELLO held for it.
    mutating func heardFromCoordinator() {
        isConnected = true
        helloQueued = false
        heldHelloLeftAt = nil
    }

    /// Whether the engine's HELLO goes now; a `.send` without a connection counts as the one queued.
    mutating func admitHello(at now: MonotonicTime) -> Verdict {
        if isConnected, let left = heldHelloLeftAt {
            let since = now - left
            if since < CoordinatorSession.helloRetry { return .heldHelloInFlight(since: since) }
            heldHelloLeftAt = nil
        }
        if isConnected || !holdsQueuedHellos { return .send }
        if helloQueued { return .alreadyQueued }
        helloQueued = true
        return .send
    }
}
