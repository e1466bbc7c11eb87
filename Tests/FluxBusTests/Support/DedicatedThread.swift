import Foundation

/// Runs blocking ZeroMQ calls on a thread of their own, never on the cooperative pool.
func onDedicatedThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try body() }) }
        thread.name = "bus-test-peer"
        thread.start()
    }
}
