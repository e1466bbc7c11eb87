import FluxBusProtocol
import Testing

/// The coordinator serves a REPLAY from its log's rows as bytes, each row's payload spliced back in, instead of
/// decoding every entry and encoding it again. Whatever the entries, the frames must be the ones the decoded entries
/// encode to, the chain value the one ``LogChain`` gives, and a row that is not an entry must be refused.
@Suite("Entries served in wire layout")
struct EncodedEntriesTests {
    let codec = Codec()

    static let entries: [ReplayEntry] = [
        ReplayEntry(epoch: 1, sequence: 7, actionType: "counter.add", payload: Array(#"{"by":1}"#.utf8),
                    plan: [PlanStep(store: "counter")], outputs: [StoreOutput(store: "counter", status: .ok)]),
        ReplayEntry(epoch: 1, sequence: 8, actionType: "counter.add", payload: Array(#"{"by":2}"#.utf8),
                    plan: [PlanStep(store: "counter")], outputs: [StoreOutput(store: "counter", status: .ok)]),
        ReplayEntry(epoch: 2, sequence: 9, actionType: "zählen", payload: [], error: "refused upstream",
                    plan: [PlanStep(store: "a"), PlanStep(store: "b", waitsFor: ["a"])],
                    outputs: [StoreOutput(store: "a", status: .failed, message: "no", output: [1, 2, 3]), StoreOutput(store: "b", status: .skipped)]),
        ReplayEntry(epoch: 2, sequence: 10, actionType: "big", payload: Array(repeating: 0x7B, count: 70_000), plan: [], outputs: []),
        ReplayEntry(epoch: 2, sequence: 11, actionType: "counter.add", payload: Array(#"{"by":3}"#.utf8),
                    plan: [PlanStep(store: "counter")], outputs: [StoreOutput(store: "counter", status: .ok)]),
    ]

    /// A row as the log stores it: the entry in wire layout with an empty payload.
    func row(_ entry: ReplayEntry) -> [UInt8] {
        var stored = entry
        stored.payload = []
        return codec.encodeEntry(stored)
    }

    func splice(_ entries: [ReplayEntry], into splicer: inout EntrySplicer) throws -> [EntrySplicer.Spliced] {
        try entries.map { entry in
            try row(entry).withUnsafeBufferPointer { row in
                try entry.payload.withUnsafeBufferPointer { try splicer.append(row: row, payload: $0) }
            }
        }
    }

    @Test func splicedRowsEncodeAsTheEntriesDoAndChainAsLogged() throws {
        var splicer = EntrySplicer(limits: codec.limits)
        let spliced = try splice(Self.entries, into: &splicer)
        let encoded = splicer.entries
        #expect(encoded.count == 5 && encoded.firstSequence == 7 && encoded.lastSequence == 11)
        #expect(spliced.map(\.sequence) == Self.entries.map(\.sequence))
        #expect(spliced.map(\.actionType) == Self.entries.map(\.actionType))

        let fromRows = Message.replay(.init(epoch: 3, encoded: encoded, isLast: false, poisoned: [PoisonMark(sequence: 9, store: "a", reason: "r")]))
        let fromValues = Message.replay(.init(epoch: 3, entries: Self.entries, isLast: false, poisoned: [PoisonMark(sequence: 9, store: "a", reason: "r")]))
        #expect(codec.encode(fromRows) == codec.encode(fromValues), "the same frames, byte for byte")
        #expect(try codec.decode(codec.encode(fromRows)) == fromValues)
        #expect(fromRows == fromValues && fromRows.hashValue == fromValues.hashValue)
        #expect(encoded.decoded() == Self.entries)

        var previous: UInt64 = 0xDEAD_BEEF
        for (entry, place) in zip(Self.entries, spliced) {
            let expected = LogChain.next(after: previous, sequence: entry.sequence, actionType: entry.actionType, payload: entry.payload, error: entry.error)
            #expect(splicer.chain(of: place, after: previous) == expected, "entry #\(entry.sequence)")
            previous = expected
        }
    }

    /// One log row holds a run of completions alike but for their sequences: spliced under each sequence of the run,
    /// it gives the bytes and chain values of each entry encoded on its own.
    @Test func oneRowSplicedUnderEachSequenceOfItsRun() throws {
        let run = (7...9 as ClosedRange<UInt64>).map { sequence in
            ReplayEntry(epoch: 1, sequence: sequence, actionType: "counter.add", payload: Array(#"{"by":\#(sequence)}"#.utf8),
                        plan: [PlanStep(store: "counter")], outputs: [StoreOutput(store: "counter", status: .ok)])
        }
        var splicer = EntrySplicer(limits: codec.limits)
        let first = row(run[0])
        let spliced = try run.map { entry in
            try first.withUnsafeBufferPointer { row in
                try entry.payload.withUnsafeBufferPointer { try splicer.append(row: row, payload: $0, sequence: entry.sequence) }
            }
        }
        #expect(splicer.entries == EncodedEntries(run))
        #expect(spliced.map(\.sequence) == [7, 8, 9])
        var previous: UInt64 = 0
        for (entry, place) in zip(run, spliced) {
            let expected = LogChain.next(after: previous, sequence: entry.sequence, actionType: entry.actionType, payload: entry.payload, error: entry.error)
            #expect(splicer.chain(of: place, after: previous) == expected, "entry #\(entry.sequence)")
            previous = expected
        }
    }

    @Test func entriesEncodedByTheWriterAreTheSameBytes() throws {
        var splicer = EntrySplicer(limits: codec.limits)
        _ = try splice(Self.entries, into: &splicer)
        #expect(EncodedEntries(Self.entries) == splicer.entries)
        #expect(EncodedEntries([]).count == 0)
    }

    @Test func settingTheEntriesReplacesTheEncodedOnes() throws {
        var replay = Message.Replay(epoch: 1, encoded: EncodedEntries(Self.entries))
        #expect(replay.entryCount == 5 && replay.entries == Self.entries)
        replay.entries.removeFirst()
        #expect(replay.entryCount == 4 && replay.encodedEntries == nil)
        #expect(try codec.decode(codec.encode(.replay(replay))) == .replay(.init(epoch: 1, entries: Array(Self.entries.dropFirst()))))
    }

    /// Each row is damaged in one way; the splicer refuses it, as the decoder would have.
    @Test(arguments: ["truncated", "presence byte 2", "trailing byte", "plan over the limit", "payload over the limit", "tail changed after a good row"])
    func aRowThatIsNotAnEntryIsRefused(damage: String) throws {
        let limits = Limits(maxBytesField: 100, maxListCount: 1)
        var splicer = EntrySplicer(limits: limits)
        var entry = Self.entries[0]
        var payload = entry.payload
        var bytes = row(entry)
        // epoch 8, sequence 8, actionType 2 + 11, payload length 4: the error's presence byte follows.
        let presence = 8 + 8 + 2 + entry.actionType.utf8.count + 4
        switch damage {
        case "truncated": bytes.removeLast(3)
        case "presence byte 2": bytes[presence] = 2
        case "trailing byte": bytes.append(0)
        case "plan over the limit":
            entry.plan = [PlanStep(store: "a"), PlanStep(store: "b")]
            bytes = row(entry)
        case "payload over the limit": payload = Array(repeating: 1, count: 101)
        default:
            // The first row is good and its tail is checked; the second's tail starts the same and goes on.
            _ = try splice([entry], into: &splicer)
            bytes.append(contentsOf: [0, 0])
        }
        #expect(throws: DecodeError.self) {
            try bytes.withUnsafeBufferPointer { row in try payload.withUnsafeBufferPointer { try splicer.append(row: row, payload: $0) } }
        }
        #expect(splicer.entries.count == (damage == "tail changed after a good row" ? 1 : 0), "nothing of the refused row is kept")
    }
}
