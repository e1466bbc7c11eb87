@testable import Flux

/// Records calls the way Jest's `jest.fn()` does in Facebook's Dispatcher tests.
final class CallRecorder<Payload> {
    private(set) var calls: [Payload] = []
    var count: Int { calls.count }
    func callAsFunction(_ payload: Payload) { calls.append(payload) }
}

/// A reference payload, so tests can check that every callback got the identical object (Jest's `toBe`).
final class Payload {
    let shouldThrow: Bool
    init(shouldThrow: Bool = false) { self.shouldThrow = shouldThrow }
}

struct Boom: Error, Equatable {}
