import Foundation
import Testing
import ZeroMQ

/// UTF-8 bytes of a string, for building frames.
func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

/// The frames of a message as strings, for readable expectations.
func strings(_ frames: [[UInt8]]?) -> [String]? {
    frames?.map { String(decoding: $0, as: UTF8.self) }
}

/// Runs blocking ZeroMQ code on a fresh thread, never on the cooperative pool (DESIGN §5), and awaits its result.
func onDedicatedThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try body() }) }
        thread.name = "zmq-test"
        thread.start()
    }
}

/// A unique `ipc://` endpoint under /tmp, with the process id and a UUID; remove its file with `removeIPCFile`.
func uniqueIPCEndpoint() -> String {
    "ipc:///tmp/fluxbus-zmq-test-\(ProcessInfo.processInfo.processIdentifier)-\(UUID().uuidString).sock"
}

func removeIPCFile(_ endpoint: String) {
    try? FileManager.default.removeItem(atPath: String(endpoint.dropFirst("ipc://".count)))
}

/// A unique `inproc://` endpoint.
func uniqueInprocEndpoint() -> String { "inproc://test-\(UUID().uuidString)" }

/// Enough time for anything on loopback that should happen; tests never wait this long unless something broke.
let patience = Duration.seconds(5)

/// How long to watch for something that should *not* happen.
let quietPeriod = Duration.milliseconds(300)

/// A TCP endpoint on 127.0.0.1 where nothing listens: bound on an ephemeral port, then released.
func unusedTCPEndpoint(context: ZMQContext) throws -> String {
    let probe = try ZMQSocket(.router, context: context)
    defer { probe.close() }
    try probe.bind("tcp://127.0.0.1:*")
    let endpoint = try probe.lastEndpoint
    try probe.unbind(endpoint)
    return endpoint
}

/// Sends `probe` from a publisher until the subscriber receives something, and returns what it received: the
/// remedy for slow joiners when there is one subscriber and no XPUB.
func publishUntilReceived(_ publisher: ZMQSocket, _ subscriber: ZMQSocket, probe: [[UInt8]]) throws -> [[UInt8]] {
    let deadline = ContinuousClock.now.advanced(by: patience)
    while ContinuousClock.now < deadline {
        try publisher.send(probe)
        if let frames = try subscriber.receive(timeout: .milliseconds(10)) { return frames }
    }
    Issue.record("the subscriber never received a probe")
    return []
}
