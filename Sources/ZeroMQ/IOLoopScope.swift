/// The loop-thread side of an ``IOLoop``: its sockets, read handlers and timers.
///
/// Every closure run by the loop receives its scope. The scope is not `Sendable`, so it (and the sockets created
/// through it) cannot leave the loop's thread; handlers and timer bodies registered here need not be `Sendable`
/// either, and may share plain mutable state with each other.
///
/// ```swift
/// loop.execute { scope in
///     let subscriber = try scope.socket(.sub)
///     try subscriber.subscribe()
///     try subscriber.connect(publishEndpoint)
///     var received = 0
///     scope.add(subscriber) { socket in
///         while let frames = try socket.tryReceive() { received += 1; output.yield(frames) }
///     }
///     scope.schedule(every: .seconds(1)) { print("received \(received)") }
/// }
/// ```
public final class IOLoopScope {
    /// The loop this scope belongs to.
    public let loop: IOLoop

    // The loop's state is only touched on its own thread, one statement at a time: the dynamic exclusivity checks of
    // class properties (a runtime call and a thread-local access set each) cost more than the loop's own work per
    // wake-up, so its hot properties skip them.
    private final class Registration {
        let socket: ZMQSocket
        @exclusivity(unchecked) var onReadable: (ZMQSocket) throws -> Void
        @exclusivity(unchecked) var isActive = true

        init(socket: ZMQSocket, onReadable: @escaping (ZMQSocket) throws -> Void) {
            self.socket = socket
            self.onReadable = onReadable
        }
    }

    private final class ScheduledTimer {
        let handle = IOLoopTimer()
        @exclusivity(unchecked) var deadline: ContinuousClock.Instant
        let interval: Duration?
        let body: () throws -> Void
        @exclusivity(unchecked) var isDone = false

        init(deadline: ContinuousClock.Instant, interval: Duration?, body: @escaping () throws -> Void) {
            self.deadline = deadline
            self.interval = interval
            self.body = body
        }

        var isLive: Bool { !isDone && !handle.isCancelled }
    }

    private struct WeakSocket {
        weak var socket: ZMQSocket?
    }

    @exclusivity(unchecked) private var registrations: [Registration] = []
    @exclusivity(unchecked) private var timers: [ScheduledTimer] = []
    /// The earliest deadline in ``timers``, cancelled ones included (so never later than the next one due): an
    /// iteration that finds the clock before it looks at no timer. Cancelled timers leave the list before the next
    /// wait, or when a deadline passes.
    @exclusivity(unchecked) private var earliestDeadline: ContinuousClock.Instant?
    @exclusivity(unchecked) private var createdSockets: [WeakSocket] = []
    @exclusivity(unchecked) private var descriptorWatches: [DescriptorWatch] = []
    /// The descriptor watches as of the last rebuild, in the order the readiness reports them.
    @exclusivity(unchecked) private var polledDescriptors: [DescriptorWatch] = []
    @exclusivity(unchecked) private var stopHandlers: [() -> Void] = []
    @exclusivity(unchecked) private var readiness = SocketReadiness()
    /// The registrations behind the watched sockets from index 1 on, as of the last rebuild; index 0 is the sentinel.
    @exclusivity(unchecked) private var polled: [Registration] = []
    @exclusivity(unchecked) private var firstPolledIndex = 1
    @exclusivity(unchecked) private var watchIsStale = true
    /// Whether the previous iteration waited. Handlers found ready right after a wait run at once; after a busy
    /// iteration, the next one first checks every descriptor (without waiting), so that no socket starves behind
    /// a busy one.
    @exclusivity(unchecked) private var justWaited = false

    /// An unconnected socket that is always watched, never readable: when the context is shut down, its descriptor
    /// fires and asking it fails with ETERM, so the loop stops even if it serves no socket of its own. `nil` if the context was
    /// already shut down when the loop started, which stops the loop at once.
    private let sentinel: ZMQSocket?

    init(loop: IOLoop) {
        self.loop = loop
        self.sentinel = try? ZMQSocket(.pair, context: loop.context)
        if sentinel == nil { loop.requestStop() }
    }

    /// The loop's context.
    public var context: ZMQContext { loop.context }

    /// Creates a socket in the loop's context. The loop closes it when it stops, if it is still open.
    ///
    /// - Throws: ``ZMQError``: ``ZMQError/isTerminated`` after the context was shut down.
    public func socket(_ type: SocketType) throws(ZMQError) -> ZMQSocket {
        let socket = try ZMQSocket(type, context: context)
        createdSockets.removeAll { $0.socket == nil }
        createdSockets.append(WeakSocket(socket: socket))
        return socket
    }

    /// Calls `onReadable` on the loop's thread whenever `socket` has a message, until ``remove(_:)`` or until the
    /// socket is closed. Adding a socket again replaces its handler. The loop closes the socket when it stops.
    ///
    /// Polling is level-triggered: the handler should receive at least one message, and usually all that are
    /// ready (`while let frames = try socket.tryReceive()`), or it will be called again at once. Errors it throws
    /// go to the loop's `onError`.
    public func add(_ socket: ZMQSocket, onReadable: @escaping (ZMQSocket) throws -> Void) {
        if let existing = registrations.first(where: { $0.socket === socket }) {
            existing.onReadable = onReadable
            return
        }
        registrations.append(Registration(socket: socket, onReadable: onReadable))
        watchIsStale = true
    }

    /// Stops serving `socket`; it stays open.
    public func remove(_ socket: ZMQSocket) {
        unregister { $0.socket === socket }
    }

    /// Calls `onReadable` on the loop's thread whenever the plain descriptor `descriptor` is readable (`poll(2)`,
    /// level-triggered), until ``remove(descriptor:)``. For a descriptor that other threads use too, such as the
    /// `ZMQ_FD` of a socket that they share under a lock: the loop itself never touches a socket behind one.
    public func add(descriptor: Int32, onReadable: @escaping () throws -> Void) {
        descriptorWatches.append(DescriptorWatch(descriptor: descriptor, onReadable: onReadable))
        watchIsStale = true
    }

    /// Stops watching `descriptor`.
    public func remove(descriptor: Int32) {
        descriptorWatches.removeAll { watch in
            guard watch.descriptor == descriptor else { return false }
            watch.isActive = false
            return true
        }
        watchIsStale = true
    }

    /// Runs `body` on the loop's thread when the loop stops (shut down, or its context was), before it closes its
    /// sockets: for state that must not outlive the loop, such as sockets it does not own.
    public func atStop(_ body: @escaping () -> Void) {
        stopHandlers.append(body)
    }

    /// Runs `body` once on the loop's thread after `delay`.
    @discardableResult
    public func schedule(after delay: Duration, _ body: @escaping () throws -> Void) -> IOLoopTimer {
        addTimer(ScheduledTimer(deadline: .now.advanced(by: delay), interval: nil, body: body))
    }

    /// Runs `body` on the loop's thread every `interval`, first after one interval. Ticks that the loop was too busy
    /// to run are skipped, not run in a burst.
    @discardableResult
    public func schedule(every interval: Duration, _ body: @escaping () throws -> Void) -> IOLoopTimer {
        precondition(interval > .zero, "a repeating timer needs a positive interval, got \(interval)")
        return addTimer(ScheduledTimer(deadline: .now.advanced(by: interval), interval: interval, body: body))
    }

    /// Asks the loop to stop after the current iteration; see ``IOLoop/shutdown()``.
    public func stop() {
        loop.requestStop()
    }

    private func addTimer(_ timer: ScheduledTimer) -> IOLoopTimer {
        timers.append(timer)
        earliestDeadline = earliestDeadline.map { min($0, timer.deadline) } ?? timer.deadline
        return timer.handle
    }

    // MARK: - The loop

    /// Runs timers, jobs and socket handlers until the loop is asked to stop (or its context is shut down) and no
    /// queued job is left.
    ///
    /// One wait per wake-up: it asks the sockets that can have changed whether they are readable (see
    /// ``SocketReadiness``), and only when none is does it wait, for the time to the next timer. The wake pipe is
    /// only there to end a wait; `takeJobs` reads its flag, not the pipe, on every iteration.
    func runUntilStopped() {
        while true {
            fireDueTimers()
            guard let (jobs, isStopping) = loop.takeJobs() else { return }
            for job in jobs { perform { try job(self) } }
            serveDescriptors()
            do {
                try rebuildWatchIfNeeded()
                let ready = try readiness.readable()
                if ready.isEmpty || !justWaited {
                    // Stopping: serve what is ready, then come back for the remaining jobs without waiting.
                    try readiness.wait(timeout: !ready.isEmpty || isStopping ? .zero : timeToNextTimer())
                    justWaited = true
                    // What the wait found is asked about, and served, in the next iteration, after timers and jobs.
                    if ready.isEmpty { continue }
                }
                justWaited = false
                dispatch(ready)
            } catch {
                // ETERM: the context was shut down, so no socket can work any more; any other error would repeat
                // on every iteration. Either way, stop after the queued jobs instead of spinning.
                if !error.isTerminated { loop.onError(error) }
                loop.requestStop()
            }
        }
    }

    /// How often the loop waited (`poll(2)`, blocking or not) and asked a socket for `ZMQ_EVENTS`, so far: each costs
    /// at least one syscall, and a test holds the loop to its budget per message with them (issue 17). Read it on
    /// the loop's thread.
    public var waits: Int { readiness.waits }
    public var readinessQueries: Int { readiness.queries }

    /// Closes every socket the loop served or created, and drops all handlers and timers (breaking any reference
    /// cycle through them).
    func closeEverything() {
        for handler in stopHandlers { handler() }
        stopHandlers.removeAll()
        descriptorWatches.removeAll()
        polledDescriptors.removeAll()
        for registration in registrations {
            registration.isActive = false
            registration.socket.close()
        }
        for created in createdSockets { created.socket?.close() }
        sentinel?.close()
        registrations.removeAll()
        createdSockets.removeAll()
        timers.removeAll()
        earliestDeadline = nil
        polled.removeAll()
        readiness = SocketReadiness()
    }

    private func perform(_ body: () throws -> Void) {
        do { try body() } catch { loop.onError(error) }
    }

    private func rebuildWatchIfNeeded() throws(ZMQError) {
        if registrations.contains(where: { $0.socket.isClosed }) {
            unregister { $0.socket.isClosed }
        }
        guard watchIsStale else { return }
        // With no sentinel the loop is stopping already; watching only the pipe is enough for that.
        let sockets = (sentinel.map { [$0] } ?? []) + registrations.map(\.socket)
        try readiness.watch(plain: [loop.wakePipe.readEnd], reported: descriptorWatches.map(\.descriptor), sockets: sockets)
        polled = registrations
        polledDescriptors = descriptorWatches
        firstPolledIndex = sentinel == nil ? 0 : 1
        watchIsStale = false
    }

    private func unregister(where matches: (Registration) -> Bool) {
        registrations.removeAll { registration in
            guard matches(registration) else { return false }
            registration.isActive = false
            return true
        }
        watchIsStale = true
    }

    /// Runs the handlers of the ready sockets; `ready` are indices among the watched sockets.
    private func dispatch(_ ready: [Int]) {
        for index in ready where index >= firstPolledIndex {
            let registration = polled[index - firstPolledIndex]
            // An earlier handler in this round may have removed or closed it.
            guard registration.isActive, !registration.socket.isClosed else { continue }
            perform { try registration.onReadable(registration.socket) }
            readiness.served(index)
        }
    }

    /// Runs the handlers of the watched descriptors that the last wait found readable.
    private func serveDescriptors() {
        for index in readiness.takeFired() where polledDescriptors[index].isActive {
            perform(polledDescriptors[index].onReadable)
        }
    }

    private func fireDueTimers() {
        // Most iterations come before the earliest deadline: one clock read and one comparison then.
        guard let earliest = earliestDeadline else { return }
        let now = ContinuousClock.now
        guard earliest <= now else { return }
        defer { earliestDeadline = timers.lazy.map(\.deadline).min() }
        let due = timers.filter { $0.isLive && $0.deadline <= now }.sorted { $0.deadline < $1.deadline }
        for timer in due where timer.isLive {
            perform(timer.body)
            if let interval = timer.interval {
                let next = timer.deadline.advanced(by: interval)
                timer.deadline = next > now ? next : now.advanced(by: interval)
            } else {
                timer.isDone = true
            }
        }
        timers.removeAll { !$0.isLive }
    }

    /// The time until the nearest live timer; `nil` (wait indefinitely) when there is none. Called before each wait,
    /// it drops the timers cancelled since the last one, so that the list is as long as the live ones whatever their
    /// deadlines (a coordinator cancels a timer of its own on most dispatches).
    private func timeToNextTimer() -> Duration? {
        timers.removeAll { !$0.isLive }
        earliestDeadline = timers.lazy.map(\.deadline).min()
        guard let nearest = earliestDeadline else { return nil }
        return max(.zero, ContinuousClock.now.duration(to: nearest))
    }
}

@available(*, unavailable)
extension IOLoopScope: Sendable {}
