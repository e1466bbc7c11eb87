import FluxBusProtocol
import Synchronization
import ZeroMQ

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The client's DEALER socket, shared under one lock by the tasks that make requests and the client's I/O loop.
///
/// A request costs the messages themselves and as few thread wake-ups as can be:
///
/// - **Sending:** the calling task sends on the socket itself, on its own thread; the loop is not woken for it.
/// - **Receiving:** when no other request is waiting, the caller then waits for its answer on the socket itself: its
///   thread blocks in `poll(2)` on the socket's `ZMQ_FD`, so the answer wakes it directly and the task goes on where
///   it was, instead of waking the loop's thread, which would wake a thread of the cooperative pool to resume it. It
///   blocks for at most ``directWaitLimit``; by then, or when other requests wait too, the loop receives the answers
///   and resumes their tasks (``ClientState/Receiver``).
/// - **Timeouts:** one loop timer at the earliest deadline fails the requests that are late; a request wakes the loop
///   only when its deadline is earlier than that timer's.
///
/// ZeroMQ sockets are not thread-safe, but may move between threads across a full memory barrier: every use of the
/// socket, by a caller or by the loop, is under the lock (``ClientState``), whose acquire and release order it. The
/// loop watches only the socket's descriptor (``IOLoopScope/add(descriptor:onReadable:)``), never the socket itself,
/// and only while it receives, so that it does not wake for answers a caller is waiting for. Whoever uses the
/// socket drains it before it lets go of the lock, which also re-arms the descriptor for whoever waits on it.
final class ClientChannel: Sendable {
    /// The key under which the one outstanding history request (FETCH, answered by REPLAY) waits.
    static let historyKey = "fetch"
    /// How long a caller waits on the socket itself, blocking its thread of the pool, before the loop takes over;
    /// answers that come sooner (most, on one host or a LAN) save two thread wake-ups.
    static let directWaitLimit = Duration.milliseconds(2)

    let loop: IOLoop
    let state: Mutex<ClientState>
    /// The socket's `ZMQ_FD`.
    let descriptor: Int32
    /// Wakes a caller waiting on the socket when another thread settled its request.
    let wake: WakePipe
    private let directWaitLimit: Duration
    /// Whether a lone request's caller waits on the socket itself; if not, the loop always watches it.
    var callersReceive: Bool { directWaitLimit > .zero }

    /// Call on the loop's thread, before the socket connects.
    init(dealer: sending ZMQSocket, endpoint: String, loop: IOLoop, directWaitLimit: Duration = directWaitLimit) throws {
        descriptor = try dealer.get(.fileDescriptor)
        wake = try WakePipe()
        self.loop = loop
        self.directWaitLimit = directWaitLimit
        state = Mutex(ClientState(dealer: dealer, endpoint: endpoint))
    }

    deinit { wake.close() }

    /// Sends `frames` as request `id` and returns its answer, or throws ``BusError``.
    func request(_ frames: [[UInt8]], id: String, timeout: Duration) async throws -> Message {
        try await withCheckedThrowingContinuation { continuation in
            var deliveries = Deliveries()
            let (receivesItself, armsSweep, startsLoop) = state.withLock { state -> (Bool, Bool, Bool) in
                guard let deadline = state.start(frames, id: id, timeout: timeout, continuation: continuation, into: &deliveries)
                else { return (false, false, false) }
                let armsSweep = state.sweepAt.map { deadline < $0 } ?? true
                if armsSweep { state.sweepAt = deadline }
                guard state.receiver == .none else {
                    // The send may have taken the descriptor's signal from whoever waits on it.
                    state.drain(into: &deliveries)
                    return (false, armsSweep, false)
                }
                state.receiver = callersReceive ? .caller(id) : .loop
                return (state.receiver != .loop, armsSweep, state.receiver == .loop)
            }
            deliveries.perform(wakingCallerWith: wake)
            if armsSweep { loop.execute { [self] scope in sweep(scope) } }
            if startsLoop { loop.execute { [self] scope in loopReceive(scope) } }
            if receivesItself { receive(id) }
        }
    }

    /// Fails every waiting request and every later one, and closes the socket once the loop has stopped.
    func close() async {
        var deliveries = Deliveries()
        state.withLock { state in
            state.closed = state.closed ?? "the client is closed"
            state.failAll(BusError(code: .unreachable, message: "the client closed before an answer came"), into: &deliveries)
        }
        deliveries.perform(wakingCallerWith: wake)
        await loop.shutdown()
    }

    /// Waits on the socket, on the caller's thread, until request `id` is settled or ``directWaitLimit`` has passed;
    /// then the loop receives for the requests still waiting, this one included.
    private func receive(_ id: String) {
        let limit = ContinuousClock.now.advanced(by: directWaitLimit)
        var descriptors = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0),
                           pollfd(fd: wake.readEnd, events: Int16(POLLIN), revents: 0)]
        while true {
            var deliveries = Deliveries()
            let handsOver: Bool? = state.withLock { state in
                // Settled by another thread (a timeout), or by this drain: it settles the caller's own request exactly
                // when it says it wakes the caller. Each look-up of the id hashed all its bytes.
                var settled = state.waiters[id] == nil
                if !settled {
                    state.drain(into: &deliveries, stoppingAtCallersAnswer: true)
                    settled = deliveries.wakesCaller
                }
                guard settled || ContinuousClock.now >= limit else { return nil }
                state.receiver = state.waiters.isEmpty ? .none : .loop
                return state.receiver == .loop
            }
            // This thread settled its own request, if it was not woken for it.
            deliveries.wakesCaller = false
            deliveries.perform(wakingCallerWith: wake)
            if let handsOver {
                if handsOver { loop.execute { [self] scope in loopReceive(scope) } }
                return
            }
            let milliseconds = Int32(clamping: ContinuousClock.now.duration(to: limit).roundedUpMilliseconds)
            if poll(&descriptors, 2, max(milliseconds, 0)) > 0 && descriptors[1].revents != 0 { wake.drain() }
        }
    }
}
