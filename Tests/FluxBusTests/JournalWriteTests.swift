import FluxBusProtocol
import Foundation
import Testing

@testable import FluxBus

/// A journal record's body: every kind of write the journal holds comes back from it as written, strings of every
/// shape included, and a body that grows far past its first buffer loses nothing.
@Suite("Journal records: writes in, the same writes out")
struct JournalWriteTests {
    let codec = Codec()

    /// One write of each kind the journal takes, with empty, short (held inline by `String`), long and non-ASCII
    /// strings, and optional fields both present and absent.
    func everyKind(payloadBytes: Int) -> [LogWrite] {
        let payload = Array(repeating: UInt8(ascii: "p"), count: payloadBytes)
        let long = String(repeating: "ledger-✓-", count: 40)
        var run = ActionRun(first: 10, epoch: 3, origin: "client-ü", requestID: "batch-1", batch: (10, 2), fingerprint: 99)
        run.append(BatchAction(actionType: "counter.add", payload: payload, error: nil), chain: 7)
        run.append(BatchAction(actionType: long, payload: [], error: "refused: ✗"), chain: 8)
        let entry = ReplayEntry(
            epoch: 3, sequence: 4, actionType: "counter.add", payload: [], plan: [PlanStep(store: "counter")],
            outputs: [StoreOutput(store: "counter", status: .ok, output: Array("{\"count\":3}".utf8))])
        return [
            .epoch(3),
            .action(sequence: 5, epoch: 3, action: BatchAction(actionType: "a", payload: payload, error: nil), origin: "",
                    requestID: "r-5", batch: nil, chain: 11, fingerprint: 12),
            .action(sequence: 6, epoch: 3, action: BatchAction(actionType: long, payload: [], error: "no"), origin: "cli",
                    requestID: "", batch: (6, 3), chain: 13, fingerprint: 14),
            .actions(run),
            .completion(entry, last: 9),
            .decision(sequence: 5, output: StoreOutput(store: "ledger", status: .failed, message: "insufficient ✗", output: nil)),
            .decision(sequence: 6, output: StoreOutput(store: "ledger", status: .ok, output: payload)),
            .plans(request: 5, plans: ["counter.add": [PlanStep(store: "counter"), PlanStep(store: "audit", waitsFor: ["counter", long])]]),
            .answer(requestID: "r-5", sequence: 5, message: .result(.init(requestID: "r-5", epoch: 3, sequence: 5, elapsedMicros: 9, outcomes: []))),
            .store("audit", StoreHistory(from: 1, before: 5)),
            .declaration(StoreDeclaration(name: "audit", dependsOn: ["counter"], handlesAll: true, lastApplied: 0)),
            .poison(PoisonMark(sequence: 6, store: "ledger", reason: long)),
        ]
    }

    @Test(arguments: [0, 5, 100_000])
    func everyKindComesBackAsWritten(payloadBytes: Int) throws {
        let writes = everyKind(payloadBytes: payloadBytes)
        let time = Date(timeIntervalSince1970: 1_765_000_000.25).timeIntervalSince1970
        let (body, blobs) = try #require(JournalWrite.encode(writes, at: time, codec: codec))
        let decoded = try JournalWrite.decode(body, codec: codec)

        #expect(decoded.at == time)
        #expect(decoded.writes.count == writes.count)
        #expect(decoded.blobs == blobs)
        // The same writes, field by field: encoding what came back gives the same bytes.
        let again = try #require(JournalWrite.encode(decoded.writes, at: time, codec: codec))
        #expect(again.body == body)
        guard case .actions(let run) = decoded.writes[3], case .poison(let mark) = decoded.writes[11] else {
            Issue.record("kinds out of order: \(decoded.writes.map { "\($0)".prefix(20) })")
            return
        }
        #expect(run.actions.map(\.payload.count) == [payloadBytes, 0])
        #expect(run.actions[1].actionType == String(repeating: "ledger-✓-", count: 40))
        #expect(run.actions[1].error == "refused: ✗")
        #expect(mark.reason.hasPrefix("ledger-✓-"))
    }

    /// The layout itself, which records already on disk were written in: a kind byte, integers little-endian, a
    /// string after its u32 length.
    @Test func theBytesAreTheRecordLayout() throws {
        let time = 1_765_000_000.5
        let (body, _) = try #require(JournalWrite.encode([.epoch(3), .store("ab", StoreHistory(from: 1, before: 5))], at: time, codec: codec))
        func le<Value: FixedWidthInteger>(_ value: Value) -> [UInt8] { withUnsafeBytes(of: value.littleEndian) { Array($0) } }
        let expected: [UInt8] = [9] + le(time.bitPattern) + [1] + le(UInt64(3)) + [7] + le(UInt32(2)) + Array("ab".utf8)
            + le(UInt64(1)) + le(UInt64(5))
        #expect(body == expected)
    }

    @Test func aSnapshotIsNotJournaled() {
        let writes: [LogWrite] = [.epoch(1), .snapshotAbandon(store: "counter", sequence: 3)]
        #expect(JournalWrite.encode(writes, at: 0, codec: codec) == nil)
    }
}
