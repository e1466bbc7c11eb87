import FluxBusClient
import Testing
import ZeroMQ

/// Which handshake events refuse a peer: the two definite verdicts at once; a dropped connection never on plain text,
/// and on CURVE only as a wrong server key, several in a row before any handshake succeeded.
@Suite struct HandshakeVerdictsTests {
    static let endpoint = "ipc:///tmp/c.sock"

    static func record(_ event: MonitorEvent, _ value: UInt32 = 0) -> MonitorRecord {
        MonitorRecord(event: event, value: value, endpoint: endpoint)
    }

    static func judge(_ events: [MonitorEvent], usesCurve: Bool) -> [HandshakeVerdicts.Judgement?] {
        var verdicts = HandshakeVerdicts(endpoint: endpoint, usesCurve: usesCurve)
        return events.map { verdicts.judge(record($0)) }
    }

    static func isRefusal(_ judgement: HandshakeVerdicts.Judgement?) -> Bool {
        if case .refused? = judgement { true } else { false }
    }

    @Test(arguments: [false, true])
    func authAndProtocolFailuresAreVerdictsAtOnce(usesCurve: Bool) {
        var verdicts = HandshakeVerdicts(endpoint: Self.endpoint, usesCurve: usesCurve)
        let auth = verdicts.judge(Self.record(.handshakeFailedAuth, 400))
        let mismatch = verdicts.judge(Self.record(.handshakeFailedProtocol, 0x1100_0001))
        guard case .refused(let authReason)? = auth, case .refused(let mismatchReason)? = mismatch else {
            Issue.record("not refused: \(String(describing: auth)), \(String(describing: mismatch))")
            return
        }
        #expect(authReason.contains("refused this key (ZAP status 400)"))
        #expect(mismatchReason.contains("both sides use CURVE"))
    }

    @Test func onPlainTextADroppedHandshakeIsNeverAVerdict() {
        let drops = Array(repeating: MonitorEvent.handshakeFailedNoDetail, count: 20)
        #expect(Self.judge(drops, usesCurve: false).allSatisfy { $0 == .dropped })
    }

    @Test func onCurveDropsInARowBeforeAnySuccessMeanAWrongServerKey() {
        let count = HandshakeVerdicts.dropsMeaningWrongServerKey
        let judgements = Self.judge(Array(repeating: .handshakeFailedNoDetail, count: count + 1), usesCurve: true)
        #expect(judgements.prefix(count - 1).allSatisfy { $0 == .dropped })
        #expect(judgements.suffix(2).allSatisfy(Self.isRefusal))
        if case .refused(let reason)? = judgements.last {
            #expect(reason.contains("check --curve-server-key"))
        }
    }

    @Test func onCurveDropsAfterASuccessfulHandshakeAreOnlyDrops() {
        let events: [MonitorEvent] = [.handshakeSucceeded, .disconnected]
            + Array(repeating: .handshakeFailedNoDetail, count: 3 * HandshakeVerdicts.dropsMeaningWrongServerKey)
        let judgements = Self.judge(events, usesCurve: true)
        #expect(judgements.prefix(2) == [.connected, .disconnected])
        #expect(judgements.dropFirst(2).allSatisfy { $0 == .dropped })
        #expect(Self.judge([.connected, .listening], usesCurve: true) == [nil, nil])
    }
}
