import Testing
import ZeroMQ

@Suite struct SmokeTests {
    @Test func version() {
        #expect(ZeroMQVersion.current >= ZeroMQVersion(major: 4, minor: 3, patch: 0))
    }
}
