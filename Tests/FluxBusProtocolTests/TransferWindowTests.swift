import FluxBusProtocol
import Testing

/// The receiving side of a transfer (docs/PROTOCOL.md, "Transfers"): the window of PULLs, the order of CHUNKs, the
/// checksum.
@Suite("Transfer window")
struct TransferWindowTests {
    static let state: [UInt8] = Array("0123456789abcdefghijklmnopqrstuvwxyz!".utf8)  // 37 bytes

    static func chunk(_ offset: Int, _ count: Int) -> Message.Chunk {
        Message.Chunk(transfer: "t", offset: UInt64(offset), bytes: Array(state[offset..<min(offset + count, state.count)]))
    }

    @Test func atMostFourPullsAreOutstandingAndEachAnsweredChunkOpensOneMore() throws {
        var window = TransferWindow(
            transfer: "t", size: UInt64(Self.state.count), checksum: StateDigest.fnv1a64(Self.state), first: Array(Self.state[0..<5]),
            chunkSize: 4)
        let first = window.pulls()
        #expect(first.map(\.offset) == [5, 9, 13, 17] && first.allSatisfy { $0.maxBytes == 4 && $0.transfer == "t" })
        #expect(window.pulls().isEmpty, "the window is full")
        try window.accept(Self.chunk(5, 4))
        #expect(window.pulls().map(\.offset) == [21])
        for offset in stride(from: 9, to: 37, by: 4) {
            try window.accept(Self.chunk(offset, 4))
            _ = window.pulls()
        }
        #expect(window.isComplete && window.checksumMatches && window.received == 37)
    }

    @Test func aChunkOutOfOrderOrOfTheWrongSizeIsRefused() {
        var window = TransferWindow(transfer: "t", size: 37, checksum: StateDigest.fnv1a64(Self.state), first: [], chunkSize: 8)
        _ = window.pulls()
        #expect(throws: TransferWindow.Failure.self) { try window.accept(Self.chunk(8, 8)) }
        #expect(throws: TransferWindow.Failure.self) { try window.accept(Self.chunk(0, 5)) }
        #expect(window.received == 0)
    }

    @Test func bytesThatDoNotHashToTheChecksumDoNotMatch() throws {
        var window = TransferWindow(transfer: "t", size: 37, checksum: StateDigest.fnv1a64(Self.state) ^ 1, first: [], chunkSize: 64)
        #expect(window.pulls().map(\.maxBytes) == [37])
        try window.accept(Self.chunk(0, 37))
        #expect(window.isComplete && !window.checksumMatches)
    }
}
