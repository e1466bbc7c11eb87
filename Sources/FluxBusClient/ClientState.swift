import FluxBusProtocol
import ZeroMQ

/// A ``ClientChannel``'s state, behind its lock: the DEALER socket, the requests waiting for an answer, and who
/// receives the answers. Every use of the socket happens here, under the lock, on whichever thread holds it.
struct ClientState {
    /// Who receives answers from the socket, and so watches its `ZMQ_FD` while any request is waiting.
    enum Receiver: Equatable {
        /// No request waits: the next one's caller receives its own answer.
        case none
        /// The caller of the request with this id waits on the socket itself, on its own thread (see
        /// ``ClientChannel``); it receives every answer that comes meanwhile.
        case caller(String)
        /// The I/O loop watches the socket, when more than one request waits or the caller stopped waiting itself.
        case loop
    }

    struct Waiter {
        let continuation: CheckedContinuation<Message, any Error>
        let deadline: ContinuousClock.Instant
        let timeout: Duration
        /// ``undecodedAnswers`` when the request was sent: a timeout names the answers that failed to decode since.
        let undecodedBefore: Int
        /// Whether a connection was up when it was sent, or came up since: if so the coordinator may have it, and a
        /// handshake refused later says nothing of its outcome.
        var mayHaveArrived: Bool
    }

    let dealer: ZMQSocket
    let endpoint: String
    var waiters: [String: Waiter] = [:]
    var receiver = Receiver.none
    /// Why the coordinator refused this client's handshake, until a handshake succeeds.
    var refusal: String?
    /// Whether a connection is up, as the monitor last said (it says so a little after libzmq knows).
    var connected = false
    /// Why no request can be sent any more (the client closed, or its context was shut down).
    var closed: String?
    /// Whether the I/O loop watches the socket's descriptor; changed only on the loop's thread.
    var loopWatches = false
    /// When the loop's timeout sweep fires next; nil when none is scheduled. Each waiter's deadline is at or after it.
    var sweepAt: ContinuousClock.Instant?
    var sweepTimer: IOLoopTimer?
    /// Answers that arrived and could not be decoded (a coordinator of another protocol version, or damaged bytes),
    /// and why the last one failed. Their request id is inside what failed, so no waiter can be failed at once; a
    /// waiter that then times out says so, rather than claiming nothing came.
    private(set) var undecodedAnswers = 0
    private var lastDecodeError: DecodeError?
    private let codec = Codec()

    init(dealer: ZMQSocket, endpoint: String) {
        self.dealer = dealer
        self.endpoint = endpoint
    }

    /// Sends `frames` as request `id` and makes `continuation` wait for its answer until the deadline it returns; or
    /// fails it at once and returns nil.
    mutating func start(
        _ frames: [[UInt8]], id: String, timeout: Duration, continuation: CheckedContinuation<Message, any Error>,
        into deliveries: inout Deliveries
    ) -> ContinuousClock.Instant? {
        let failure: BusError? = if let closed {
            BusError(code: .unreachable, message: closed)
        } else if let refusal {
            BusError(code: .refused, message: refusal)
        } else if waiters[id] != nil {
            // One answer comes per connection and request id: a second wait under the same id would never end.
            BusError(code: .usage, message:
                "request id `\(id)` is already waiting for an answer on this client; await that request (its answer is "
                + "this one's too), or use another id")
        } else {
            send(frames)
        }
        if let failure {
            deliveries.resume(continuation, with: .failure(failure))
            return nil
        }
        let deadline = ContinuousClock.now.advanced(by: timeout)
        waiters[id] = Waiter(continuation: continuation, deadline: deadline, timeout: timeout,
                             undecodedBefore: undecodedAnswers, mayHaveArrived: connected)
        return deadline
    }

    private mutating func send(_ frames: [[UInt8]]) -> BusError? {
        do {
            _ = try dealer.send(frames, nonBlocking: true)
            return nil
        } catch {
            return BusError(code: .unreachable, message: "cannot send to \(endpoint): \(error)")
        }
    }

    /// Receives every answer the socket holds and settles its waiter. Ending on a receive that finds nothing also
    /// re-arms the socket's `ZMQ_FD`, which any use of the socket may have consumed: whoever waits on it next is
    /// woken by the next message.
    ///
    /// With `stoppingAtCallersAnswer`, it stops once the caller receiving has its own answer (``Deliveries/wakesCaller``),
    /// without the receive that finds the socket empty: that costs libzmq a `getpid` and a `poll` of its mailbox, on the
    /// path of every lock-step request. Whoever receives next starts with a drain of its own (the loop, or the next
    /// caller), which re-arms the descriptor before anyone waits on it.
    mutating func drain(into deliveries: inout Deliveries, stoppingAtCallersAnswer: Bool = false) {
        do {
            while let frames = try dealer.tryReceive() {
                // Answers to requests sent together may come together, as a BUNDLE.
                var messages: [Message]
                do { messages = try codec.decodeAll(frames) } catch {
                    undecodedAnswers += 1
                    lastDecodeError = error
                    continue
                }
                // Each moved out to its waiter, in order: a copy retained every field of an answer, and a STATUS has
                // dozens.
                messages.reverse()
                while let message = messages.popLast() { answer(message, into: &deliveries) }
                if stoppingAtCallersAnswer && deliveries.wakesCaller { return }
            }
        } catch {
            // The socket is closed or its context shut down: nothing more will come.
            close(because: "cannot receive from \(endpoint): \(error)", into: &deliveries)
        }
    }

    /// Fails every waiter and every later request with `reason`.
    mutating func close(because reason: String, into deliveries: inout Deliveries) {
        if closed == nil { closed = reason }
        failAll(BusError(code: .unreachable, message: reason), into: &deliveries)
    }

    mutating func failAll(_ error: BusError, into deliveries: inout Deliveries) {
        for id in Array(waiters.keys) { settle(id, with: .failure(error), into: &deliveries) }
    }

    /// A connection came up (every waiter may now reach the coordinator, and a refusal is over) or went down.
    mutating func connectionChanged(up: Bool) {
        connected = up
        guard up else { return }
        refusal = nil
        for id in waiters.keys { waiters[id]?.mayHaveArrived = true }
    }

    /// The coordinator refused the handshake: later requests fail with `reason` until a handshake succeeds. A
    /// waiter that never had a connection certainly did not reach it: refused, not applied. One that may have
    /// reached it over an earlier connection has an unknown outcome, so it fails as `unreachable`, to be asked again
    /// under the same request id, never as refused: its action may have been applied.
    mutating func refuse(because reason: String, into deliveries: inout Deliveries) {
        refusal = reason
        for (id, waiter) in waiters {
            let error = waiter.mayHaveArrived
                ? BusError(code: .unreachable, message: "\(reason). This request may have reached the coordinator over an "
                    + "earlier connection: its outcome is unknown; once connected again, send it again with the same "
                    + "request id to get its result")
                : BusError(code: .refused, message: reason)
            settle(id, with: .failure(error), into: &deliveries)
        }
    }

    /// Fails each waiter whose deadline has passed.
    mutating func expire(asOf now: ContinuousClock.Instant, into deliveries: inout Deliveries) {
        for (id, waiter) in waiters where waiter.deadline <= now {
            settle(id, with: .failure(BusError(code: .unreachable, message: timeoutMessage(for: waiter))), into: &deliveries)
        }
    }

    private func timeoutMessage(for waiter: Waiter) -> String {
        let undecoded = undecodedAnswers - waiter.undecodedBefore
        guard undecoded > 0 else {
            return "no answer from the coordinator at \(endpoint) within \(waiter.timeout); is it running "
                + "(`fluxbus coordinator`), and is this the right endpoint (--coordinator or FLUXBUS_COORDINATOR)?"
        }
        let why = lastDecodeError.map { "\($0)" } ?? "unknown error"
        return "no answer from the coordinator at \(endpoint) within \(waiter.timeout) that this client could decode: "
            + "\(undecoded) answer\(undecoded == 1 ? "" : "s") meanwhile failed to decode (last: \(why)); the outcome "
            + "is unknown. Does the coordinator speak this client's protocol, FLXB version \(Codec.version)?"
    }

    /// The earliest deadline of a waiter.
    var nextDeadline: ContinuousClock.Instant? { waiters.values.lazy.map(\.deadline).min() }

    private mutating func answer(_ message: consuming Message, into deliveries: inout Deliveries) {
        guard let id = Self.requestID(of: message) else { return }
        let outcome: Result<Message, any Error>
        if case .error(let error) = message {
            // A timeout or a coordinator that stopped (code 7) leaves the outcome unknown, like no answer: exit 3.
            outcome = .failure(BusError(code: error.code == .timeout || error.code == .internal ? .unreachable : .refused,
                                        message: error.message, remoteCode: error.code))
        } else if case .reject(let reject) = message {
            outcome = .failure(BusError(code: .refused, message: reject.reason))
        } else {
            outcome = .success(message)
        }
        settle(id, with: outcome, into: &deliveries)
    }

    private mutating func settle(
        _ id: String, with outcome: consuming Result<Message, any Error>, into deliveries: inout Deliveries
    ) {
        guard let waiter = waiters.removeValue(forKey: id) else { return }
        deliveries.resume(waiter.continuation, with: outcome)
        if receiver == .caller(id) { deliveries.wakesCaller = true }
    }

    private static func requestID(of message: Message) -> String? {
        switch message {
        case .result(let result): result.requestID
        case .batchResult(let result): result.requestID
        // An ERROR answering a FETCH has no request id to carry.
        case .error(let error): error.requestID.isEmpty ? ClientChannel.historyKey : error.requestID
        case .status(let status): status.requestID
        case .graph(let graph): graph.requestID
        case .state(let state): state.requestID
        case .chunk(let chunk): chunk.transfer
        case .replay: ClientChannel.historyKey
        default: nil
        }
    }
}

/// What settling waiters under the lock leaves to do once it is released: resuming a task there would make the next
/// holder of the lock wait for the runtime's enqueue.
struct Deliveries {
    private var resumptions: [(CheckedContinuation<Message, any Error>, Result<Message, any Error>)] = []
    /// The caller receiving on its own thread had its request settled by another thread, so must be woken.
    var wakesCaller = false

    mutating func resume(
        _ continuation: CheckedContinuation<Message, any Error>, with outcome: consuming Result<Message, any Error>
    ) {
        resumptions.append((continuation, outcome))
    }

    /// Wakes the caller if it must be, then resumes each waiter in the order settled, handing it its outcome without
    /// a copy.
    mutating func perform(wakingCallerWith pipe: WakePipe) {
        if wakesCaller { pipe.signal() }
        guard !resumptions.isEmpty else { return }
        var pending: [(CheckedContinuation<Message, any Error>, Result<Message, any Error>)] = []
        swap(&pending, &resumptions)
        pending.reverse()
        while let (continuation, outcome) = pending.popLast() { continuation.resume(with: outcome) }
    }
}
