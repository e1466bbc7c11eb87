import Testing
import ZeroMQ

@Suite struct ZMQErrorTests {
    @Test func descriptionNamesOperationTextAndErrno() {
        let error = ZMQError(errno: ZMQError.Code.hostUnreachable.rawValue,
                             operation: "send frame 1/2 on ROUTER socket")
        #expect(error.isHostUnreachable)
        #expect(!error.isWouldBlock && !error.isInterrupted && !error.isTerminated)
        #expect(error.description.hasPrefix("send frame 1/2 on ROUTER socket: "))
        #expect(error.description.contains("(errno \(error.errno))"))
        #expect(!error.message.isEmpty)
    }

    @Test func terminationReadsAsContextTerminated() {
        let error = ZMQError(errno: ZMQError.Code.terminated.rawValue, operation: "receive on SUB socket")
        #expect(error.isTerminated)
        #expect(error.message == "Context was terminated")
        #expect(error.description.contains("context terminated"))
    }

    @Test func codesAreOpenAndComparable() {
        #expect(ZMQError(errno: 11, operation: "x").code == .wouldBlock)
        #expect(ZMQError(errno: 4, operation: "x").isInterrupted)
        #expect(ZMQError.Code(rawValue: 9999) != .wouldBlock)
        #expect(ZMQError(errno: 22, operation: "a") != ZMQError(errno: 22, operation: "b"))
    }

    @Test func overriddenMessageIsKept() {
        let error = ZMQError(errno: 71, operation: "parse", message: "custom")
        #expect(error.message == "custom")
        #expect(error.code == .protocolError)
    }
}
