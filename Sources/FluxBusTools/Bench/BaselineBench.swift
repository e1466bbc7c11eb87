import FluxBus
import Foundation
import ZeroMQ

/// The floor for the distributed scenarios: a raw ZeroMQ round trip with the bus's shape and transport, measured in
/// the same run. A client DEALER sends to a relay's ROUTER, which forwards to an echo DEALER connected to the same
/// ROUTER and back again, as client → coordinator → worker → coordinator → client, each in its own process, over
/// `tcp://127.0.0.1`. The peers are `fluxbus bench-peer relay|echo`.
public enum BaselineBench {
    /// The routing id the echo peer connects with.
    static let echoID = Array("echo".utf8)

    /// The relay peer: binds a ROUTER at `endpoint` and forwards every client message to the echo peer, and every
    /// echo reply back to the client it names. Runs until the process is killed.
    public static func runRelay(endpoint: String) throws {
        let context = try ZMQContext()
        let router = try ZMQSocket(.router, context: context)
        try router.set(.linger, to: .zero)
        try router.bind(endpoint)
        while true {
            let frames = try router.receive()
            guard frames.count >= 2 else { continue }
            if frames[0] == echoID {
                // From the echo peer: [echo, client, payload] → [client, payload].
                try router.send(Array(frames.dropFirst()))
            } else {
                // From a client: [client, payload] → [echo, client, payload].
                try router.send([echoID] + frames)
            }
        }
    }

    /// The echo peer: a DEALER that connects to the relay and sends back every message it gets. It says hello first
    /// so the relay's ROUTER knows its routing id.
    public static func runEcho(endpoint: String) throws {
        let context = try ZMQContext()
        let dealer = try ZMQSocket(.dealer, context: context)
        try dealer.set(.linger, to: .zero)
        try dealer.set(.routingID, to: echoID)
        try dealer.connect(endpoint)
        while true {
            try dealer.send(try dealer.receive())
        }
    }

    /// Measures `count` lock-step round trips of a `payloadBytes` message after `warmup` unrecorded ones, on a
    /// thread of its own (blocking ZeroMQ calls stay off Swift's cooperative pool).
    /// - Throws: ``BusError`` `unreachable` when no echo comes back within 10 seconds.
    /// - Returns: the latencies, the measured part's duration, and the relay's CPU seconds over it (nil without
    ///   `relayPID` or /proc).
    static func measure(
        endpoint: String, count: Int, warmup: Int, payloadBytes: Int, relayPID: Int32?, progress: ProgressBar?
    ) async throws -> (LatencyRecorder, Duration, Double?) {
        try await onThread("fluxbus-bench-baseline") {
            let context = try ZMQContext()
            defer { context.shutdown() }
            let dealer = try ZMQSocket(.dealer, context: context)
            defer { dealer.close() }
            try dealer.set(.linger, to: .zero)
            try dealer.connect(endpoint)
            var payload = [UInt8](repeating: UInt8(ascii: "x"), count: max(payloadBytes, 8))
            var sequence: UInt64 = 0
            // The first round trip is retried until the relay and echo peers are both connected.
            func roundTrip(timeout: Duration) throws -> Bool {
                sequence += 1
                withUnsafeBytes(of: sequence.littleEndian) { payload.replaceSubrange(0..<8, with: $0) }
                try dealer.send(payload)
                let deadline = ContinuousClock.now.advanced(by: timeout)
                while let frames = try dealer.receive(timeout: ContinuousClock.now.duration(to: deadline)) {
                    if frames.last == payload { return true }  // an older, timed-out echo otherwise
                }
                return false
            }
            let connectDeadline = ContinuousClock.now.advanced(by: .seconds(10))
            while try !roundTrip(timeout: .milliseconds(100)) {
                if ContinuousClock.now > connectDeadline {
                    throw BusError(code: .unreachable, message: "no echo through the relay at \(endpoint) within 10 seconds")
                }
            }
            for _ in 0..<warmup { guard try roundTrip(timeout: .seconds(10)) else { throw lost(endpoint) } }
            let before = relayPID.flatMap(ProcessStats.read(pid:))
            var recorder = LatencyRecorder()
            let clock = ContinuousClock()
            let started = clock.now
            for index in 0..<count {
                let start = clock.now
                guard try roundTrip(timeout: .seconds(10)) else { throw lost(endpoint) }
                recorder.record(clock.now - start)
                progress?.update(index + 1, of: count)
            }
            let elapsed = clock.now - started
            let after = relayPID.flatMap(ProcessStats.read(pid:))
            return (recorder, elapsed, before.flatMap { before in after.map { $0.cpuSeconds - before.cpuSeconds } })
        }
    }

    private static func lost(_ endpoint: String) -> BusError {
        BusError(code: .unreachable, message: "an echo through the relay at \(endpoint) did not come back within 10 seconds")
    }
}

/// Runs blocking work on a thread of its own and awaits its result.
func onThread<T: Sendable>(_ name: String, _ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread {
            continuation.resume(with: Result { try body() })
        }
        thread.name = name
        thread.start()
    }
}
