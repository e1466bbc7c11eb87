@testable import FluxBus
import Testing

/// The worker's rule for HELLOs through its DEALER (docs/PROTOCOL.md, "Repeated HELLOs"), one case at a time;
/// `DealerQueueScenarioTests` shows it in the simulator, against a coordinator engine.
@Suite("HELLO gate")
struct HelloGateTests {
    let start = MonotonicTime(nanoseconds: 1_000_000_000)

    func at(_ milliseconds: Int64) -> MonotonicTime { start.advanced(by: .milliseconds(milliseconds)) }

    @Test func withoutAConnectionOneHelloIsQueuedAndTheRestWait() {
        var gate = HelloGate(holdsQueuedHellos: true)
        #expect(gate.admitHello(at: at(0)) == .send)
        #expect(gate.admitHello(at: at(1_000)) == .alreadyQueued)
        #expect(gate.admitHello(at: at(2_000)) == .alreadyQueued)
    }

    @Test func theHeldHelloCountsAsSentWhenTheConnectionComesUp() {
        var gate = HelloGate(holdsQueuedHellos: true)
        #expect(gate.admitHello(at: at(0)) == .send)
        gate.connectionChanged(up: true, at: at(2_900))
        #expect(gate.admitHello(at: at(3_000)) == .heldHelloInFlight(since: .milliseconds(100)))
        #expect(gate.admitHello(at: at(3_900)) == .send, "a second after it left, a retry goes")
    }

    @Test func anAnswerFromTheCoordinatorEndsTheWait() {
        var gate = HelloGate(holdsQueuedHellos: true)
        #expect(gate.admitHello(at: at(0)) == .send)
        gate.connectionChanged(up: true, at: at(500))
        gate.heardFromCoordinator()
        #expect(gate.admitHello(at: at(600)) == .send)
    }

    @Test func aConnectionWithNothingQueuedHoldsNothingBack() {
        var gate = HelloGate(holdsQueuedHellos: true)
        gate.connectionChanged(up: true, at: at(0))
        #expect(gate.admitHello(at: at(10)) == .send)
        #expect(gate.admitHello(at: at(20)) == .send)
        gate.connectionChanged(up: false, at: at(30))
        #expect(gate.admitHello(at: at(40)) == .send, "the first HELLO of an outage is queued")
        #expect(gate.admitHello(at: at(1_040)) == .alreadyQueued)
    }

    @Test func overInprocNothingIsHeld() {
        var gate = HelloGate(holdsQueuedHellos: false)
        #expect(gate.admitHello(at: at(0)) == .send)
        #expect(gate.admitHello(at: at(1_000)) == .send)
    }
}
