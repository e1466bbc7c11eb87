import Testing

@testable import FluxBus

/// The log's index of request ids in memory: a superset of the `request` table, rebuilt from it once it has doubled.
@Suite("The request id index")
struct RequestIDIndexTests {
    @Test func aRebuildKeepsTheLatestRequestOfAnIdAndForgetsWhatTheTableDropped() {
        var index = RequestIDIndex()
        for sequence in 1...3_000 as ClosedRange<UInt64> { index.insert("r\(sequence)", sequence: sequence) }
        #expect(index.isRebuildDue, "3,000 ids are past twice the 1,024 a rebuild waits for at least")

        // The table after a compaction: the first 2,000 requests gone, r2500's id used again by a later request,
        // and an answer row that names an earlier sequence than the id's own request.
        var logged = (2_001...3_000 as ClosedRange<UInt64>).map { (requestID: "r\($0)", sequence: $0) }
        logged.append((requestID: "r2500", sequence: 3_001))
        logged.insert((requestID: "r2999", sequence: 1_999), at: 0)
        index.rebuild(from: logged)

        #expect(!index.isRebuildDue)
        #expect(index.sequence(of: "r1") == nil, "compacted away")
        #expect(index.sequence(of: "r2001") == 2_001)
        #expect(index.sequence(of: "r2500") == 3_001, "the later request wins")
        #expect(index.sequence(of: "r2999") == 2_999, "a row naming an earlier sequence does not move the id back")
        #expect(index.logLookups == 3)

        // 1,000 ids held: the next rebuild is due past twice the 1,024 floor, 2,048.
        for sequence in 3_002...4_049 as ClosedRange<UInt64> { index.insert("r\(sequence)", sequence: sequence) }
        #expect(!index.isRebuildDue)
        index.insert("r4050", sequence: 4_050)
        #expect(index.isRebuildDue)
    }
}
