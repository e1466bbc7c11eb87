import Testing
import ZeroMQ

@Suite struct ZAPTests {
    /// libzmq's Z85 test vector: these 8 bytes are "HelloWorld"; the key below is 32 bytes of that, repeated.
    let helloWorld: [UInt8] = [0x86, 0x4F, 0xD2, 0x6F, 0xB5, 0x59, 0xF7, 0x5B]

    func requestFrames(mechanism: String = "CURVE", credentials: [[UInt8]]) -> [[UInt8]] {
        [bytes("1.0"), [0, 1, 2], bytes("fluxbus"), bytes("127.0.0.1"), bytes("worker-1"), bytes(mechanism)]
            + credentials
    }

    @Test func parsesACurveRequest() throws {
        let key = Array([[UInt8]](repeating: helloWorld, count: 4).joined())
        let request = try ZAPRequest(frames: requestFrames(credentials: [key]))
        #expect(request.version == "1.0")
        #expect(request.requestID == [0, 1, 2])
        #expect(request.domain == "fluxbus")
        #expect(request.address == "127.0.0.1")
        #expect(request.routingID == bytes("worker-1"))
        #expect(request.mechanism == "CURVE")
        #expect(request.curvePublicKey == String(repeating: "HelloWorld", count: 4))
    }

    @Test func nonCurveRequestsHaveNoCurveKey() throws {
        let plain = try ZAPRequest(frames: requestFrames(mechanism: "PLAIN", credentials: [bytes("u"), bytes("p")]))
        #expect(plain.credentials == [bytes("u"), bytes("p")])
        #expect(plain.curvePublicKey == nil)
        let null = try ZAPRequest(frames: requestFrames(mechanism: "NULL", credentials: []))
        #expect(null.credentials.isEmpty)
    }

    @Test func malformedRequestsAreProtocolErrors() throws {
        let short = try #require(throws: ZMQError.self) { try ZAPRequest(frames: [bytes("1.0"), [1]]) }
        #expect(short.code == .protocolError)
        var frames = requestFrames(credentials: [])
        frames[0] = bytes("2.0")
        let version = try #require(throws: ZMQError.self) { try ZAPRequest(frames: frames) }
        #expect(version.code == .protocolError)
    }

    @Test func repliesFollowRFC27() throws {
        let request = try ZAPRequest(frames: requestFrames(credentials: [helloWorld]))
        #expect(ZAPReply.allow(request, userID: "w1").frames
            == [bytes("1.0"), [0, 1, 2], bytes("200"), bytes("OK"), bytes("w1"), []])
        let denied = ZAPReply.deny(request, statusText: "unknown key")
        #expect(denied.frames == [bytes("1.0"), [0, 1, 2], bytes("400"), bytes("unknown key"), [], []])
        #expect(denied.statusCode == .authenticationFailure)
    }
}
