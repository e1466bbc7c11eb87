import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One dedicated thread that owns a set of sockets and timers and serves them, waiting in `poll(2)` on their `ZMQ_FD`s.
///
/// ZeroMQ sockets must stay on one thread, and no blocking ZeroMQ call may run on Swift's small cooperative thread
/// pool. An `IOLoop` gives each process that thread. Everything that touches its sockets runs there:
///
/// - **In:** any thread or task queues a closure with ``execute(_:)``, or awaits one's result with ``run(_:)``.
///   The closure is put on a `Mutex`-protected queue and the loop is woken through a pipe, so the loop never polls
///   with a timeout just to look for work. It receives the loop's ``IOLoopScope``, through which it creates sockets
///   (``IOLoopScope/socket(_:)``), registers read handlers (``IOLoopScope/add(_:onReadable:)``) and schedules timers
///   (``IOLoopScope/schedule(every:_:)``).
/// - **Out:** handlers yield into an `AsyncStream` continuation of the caller's own element type; the continuation is
///   `Sendable`, and the stream is consumed by async code. (The loop offers no stream of its own: the element type
///   is the application's choice.)
/// - **Stop:** ``shutdown()`` runs the closures already queued, closes every socket the loop created or served
///   (with the context's linger) and returns once the thread has ended. Shutting down the context stops the loop
///   too.
///
/// The poll timeout is the time to the nearest timer, or infinite when there is none.
///
/// ```swift
/// let context = try ZMQContext()
/// let loop = try IOLoop(context: context)
/// let (messages, output) = AsyncStream.makeStream(of: [[UInt8]].self)
/// let endpoint = try await loop.run { scope in
///     let router = try scope.socket(.router)
///     try router.bind("tcp://127.0.0.1:*")
///     scope.add(router) { socket in
///         while let frames = try socket.tryReceive() { output.yield(frames) }
///     }
///     return try router.lastEndpoint
/// }
/// for await frames in messages { … }
/// await loop.shutdown()
/// ```
///
/// A loop runs until it is shut down, even when no reference to it remains.
public final class IOLoop: Sendable {
    /// A closure queued to run on the loop's thread.
    public typealias Job = @Sendable (IOLoopScope) throws -> Void

    /// The context of the loop's sockets.
    public let context: ZMQContext
    /// The thread's name, also used in error messages.
    public let name: String

    let onError: @Sendable (any Error) -> Void
    let wakePipe: WakePipe
    private let shared = Mutex(Shared())
    private let finished = Completion()

    private struct Shared {
        var jobs: [Job] = []
        /// Whether a byte is in the wake pipe; at most one is.
        var wakePending = false
        var phase = Phase.running
        var thread: ObjectIdentifier?
    }

    private enum Phase {
        /// Accepting jobs.
        case running
        /// Rejecting jobs, running the ones already queued.
        case stopping
        /// The thread has ended.
        case stopped
    }

    /// Starts a loop thread.
    ///
    /// - Parameters:
    ///   - context: The context for the loop's sockets.
    ///   - name: The thread's name.
    ///   - onError: Receives errors thrown by jobs from ``execute(_:)``, handlers and timers, on the loop's thread.
    ///     By default they are written to standard error. The loop goes on after an error.
    /// - Throws: ``ZMQError`` if the wake-up pipe cannot be created (`EMFILE`).
    public init(context: ZMQContext, name: String = "zmq-io",
                onError: (@Sendable (any Error) -> Void)? = nil) throws(ZMQError) {
        self.context = context
        self.name = name
        self.onError = onError ?? { error in
            FileHandle.standardError.write(Data("IOLoop \(name): \(error)\n".utf8))
        }
        self.wakePipe = try WakePipe()
        let thread = Thread { [self] in threadMain() }
        thread.name = name
        thread.start()
    }

    deinit {
        wakePipe.close()
    }

    /// Whether the loop still accepts work.
    public var isRunning: Bool { shared.withLock { $0.phase == .running } }

    /// Whether the caller runs on the loop's thread.
    public var isCurrent: Bool {
        let current = ObjectIdentifier(Thread.current)
        return shared.withLock { $0.thread == current }
    }

    /// Queues `job` to run on the loop's thread, and returns at once.
    ///
    /// Jobs run in the order they were queued. Errors they throw go to the loop's `onError`.
    ///
    /// - Returns: `false` if the loop is stopping or stopped, in which case `job` will never run.
    @discardableResult
    public func execute(_ job: @escaping Job) -> Bool {
        shared.withLock { shared in
            guard shared.phase == .running else { return false }
            shared.jobs.append(job)
            wake(&shared)
            return true
        }
    }

    /// Runs `job` on the loop's thread and returns its result.
    ///
    /// ```swift
    /// let port = try await loop.run { scope in
    ///     let publisher = try scope.socket(.pub)
    ///     try publisher.bind("tcp://127.0.0.1:*")
    ///     return try publisher.lastEndpoint
    /// }
    /// ```
    ///
    /// If the calling task is cancelled before the loop starts the job, the job is skipped and `CancellationError`
    /// is thrown; a job that has started runs to the end.
    ///
    /// - Throws: Whatever `job` throws; `CancellationError`; ``ZMQError`` with ``ZMQError/isTerminated`` if the loop
    ///   has stopped.
    @discardableResult
    public func run<Value: Sendable>(_ job: @escaping @Sendable (IOLoopScope) throws -> Value) async throws -> Value {
        let result = OneShot<Value>()
        let accepted = execute { scope in
            guard result.claim() else { return }
            result.finish(Result { try job(scope) })
        }
        if !accepted {
            result.finish(.failure(ZMQError(errno: ZMQError.Code.terminated.rawValue,
                                            operation: "run a job on I/O loop \(name)",
                                            message: "the I/O loop has stopped")))
        }
        return try await result.value()
    }

    /// Stops the loop and waits until its thread has ended.
    ///
    /// Jobs queued before the call still run; later ones are refused. Then every socket the loop served or created
    /// is closed, with the context's linger. Called on the loop's own thread (from a handler), it only asks the loop
    /// to stop after the current iteration. From async code, call the `async` overload instead, which does not
    /// block a thread of the cooperative pool.
    public func shutdown() {
        requestStop()
        if isCurrent { return }
        finished.waitBlocking()
    }

    /// Stops the loop and suspends until its thread has ended; see ``shutdown()``.
    ///
    /// If the task is cancelled, it stops waiting; the loop still stops.
    public func shutdown() async {
        requestStop()
        await finished.wait()
    }

    // MARK: - Loop side

    /// Makes the loop stop taking jobs; it runs the queued ones, then ends.
    func requestStop() {
        shared.withLock { shared in
            guard shared.phase == .running else { return }
            shared.phase = .stopping
            wake(&shared)
        }
    }

    /// Takes the queued jobs, and whether the loop is stopping; `nil` once it is stopping and no job is left, which
    /// ends the loop.
    ///
    /// This consumes the wake-up, so a stopping loop must not block in its wait afterwards: nothing would wake it.
    func takeJobs() -> (jobs: [Job], isStopping: Bool)? {
        shared.withLock { shared in
            if shared.wakePending {
                wakePipe.drain()
                shared.wakePending = false
            }
            let isStopping = shared.phase != .running
            if shared.jobs.isEmpty && isStopping { return nil }
            defer { shared.jobs.removeAll() }
            return (shared.jobs, isStopping)
        }
    }

    private func wake(_ shared: inout Shared) {
        guard !shared.wakePending else { return }
        shared.wakePending = true
        wakePipe.signal()
    }

    private func threadMain() {
        shared.withLock { $0.thread = ObjectIdentifier(Thread.current) }
        let scope = IOLoopScope(loop: self)
        scope.runUntilStopped()
        scope.closeEverything()
        shared.withLock { shared in
            shared.phase = .stopped
            shared.thread = nil
        }
        finished.complete()
    }
}
