import FluxBusProtocol
import Testing

/// Runs (ACTIONS, ACKS, COMPLETIONS) both ways: whatever a sender joins, the receiver's `decodeAll` hands on exactly
/// the messages joined, byte for byte and in order; only alike messages of consecutive sequences join; and a run whose
/// counts disagree is refused whole.
@Suite("Runs of alike messages")
struct MessageRunsTests {
    let codec = Codec()

    /// What a receiver of `messages`, joined and encoded as the Outbox sends them, takes apart.
    func received(_ messages: [Message], maxItems: Int = 1_024) throws -> [Message] {
        try MessageRuns.join(messages, maxItems: maxItems, maxBytes: 256 << 10).flatMap { try codec.decodeAll(codec.encode($0)) }
    }

    /// The same, for a receiver that keeps ACKS whole (a coordinator) and walks each with `forEachAck`.
    func receivedKeepingAcks(_ messages: [Message], maxItems: Int) throws -> [Message] {
        try MessageRuns.join(messages, maxItems: maxItems, maxBytes: 256 << 10).flatMap { message in
            try codec.decodeAll(codec.encode(message), keepingAcks: true).flatMap { received -> [Message] in
                guard case .acks(let run) = received else { return [received] }
                var acks: [Message] = []
                run.forEachAck { acks.append(.ack($0)) }
                return acks
            }
        }
    }

    /// A stream as an engine's burst holds it: stretches of ACTIONs, ACKs and COMPLETEDs, consecutive or not, alike or
    /// not in each field a run shares, with other messages between.
    static func stream(seed: UInt64) -> [Message] {
        var rng = SplitMix64(seed: seed)
        func pick<T>(_ options: [T]) -> T { options[Int(rng.next() % UInt64(options.count))] }
        var messages: [Message] = []
        var sequence = UInt64(rng.next() % 5)
        for _ in 0..<(20 + Int(rng.next() % 200)) {
            sequence = pick([sequence &+ 1, sequence &+ 1, sequence &+ 1, sequence, sequence &+ 2, UInt64.max])
            let epoch = pick([UInt64(7), 7, 7, 8])
            let type = pick(["counter.add", "counter.add", "caf\u{E9}", "cafe\u{301}"])
            switch rng.next() % 8 {
            case 0...2:
                messages.append(.action(.init(
                    epoch: epoch, sequence: sequence, actionType: type, payload: Array("\(rng.next() % 9)".utf8),
                    error: pick([nil, nil, "no", "\u{E9}"]), plan: pick([[PlanStep(store: "counter")], [], [PlanStep(store: "kv")]]),
                    traceparent: pick(["", "", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"]))))
            case 3...4:
                messages.append(.ack(.init(epoch: epoch, sequence: sequence, results: pick([
                    [StoreResult(store: "counter", status: .ok, digest: rng.next())],
                    [StoreResult(store: "counter", status: .failed, message: pick(["caf\u{E9}", "cafe\u{301}"]), digest: rng.next())],
                    [StoreResult(store: "a", status: .ok, output: [1], digest: rng.next()), StoreResult(store: "b", status: .skipped, digest: 0)],
                    [],
                ]), timings: pick([[], [], [StoreTiming(store: "counter", readyMicros: 0, startedMicros: 1, finishedMicros: 2, sentMicros: 3)]]))))
            case 5...6:
                messages.append(.completed(.init(
                    epoch: epoch, sequence: sequence, actionType: type, elapsedMicros: rng.next() % 1_000,
                    outcomes: pick([[Outcome(store: "counter", worker: "w1", status: .ok, digest: rng.next())], [],
                                    [Outcome(store: "counter", worker: "w2", status: .unknown, message: "lost", digest: 0)]]))))
            default:
                messages.append(.heartbeat(.init(epoch: epoch, sequence: sequence)))
            }
        }
        return messages
    }

    @Test("a receiver takes apart exactly the messages a sender joined", arguments: 1...200 as ClosedRange<UInt64>)
    func joinedThenTakenApart(seed: UInt64) throws {
        let messages = Self.stream(seed: seed)
        let joined = MessageRuns.join(messages, maxItems: 7, maxBytes: 256 << 10)
        #expect(try received(messages, maxItems: 7) == messages)
        #expect(try receivedKeepingAcks(messages, maxItems: 7) == messages)
        #expect(joined.count <= messages.count)
        // Text travels as bytes: `==` on String would call the two spellings of "café" one.
        let bytes = { (list: [Message]) in list.map { codec.encode($0)[1] } }
        #expect(bytes(try joined.flatMap { try codec.decodeAll(codec.encode($0)) }) == bytes(messages))
    }

    @Test func onlyAlikeMessagesOfConsecutiveSequencesJoin() {
        let plan = [PlanStep(store: "counter")]
        func action(_ sequence: UInt64, _ type: String = "counter.add", epoch: UInt64 = 7) -> Message {
            .action(.init(epoch: epoch, sequence: sequence, actionType: type, payload: [UInt8(sequence)], plan: plan))
        }
        let joined = MessageRuns.join(
            [action(1), action(2), action(3), action(5), action(6, epoch: 8), action(7, "caf\u{E9}"), action(8, "cafe\u{301}")],
            maxItems: 1_024, maxBytes: 1 << 18)
        #expect(joined.map(\.command) == [.actions, .action, .action, .action, .action])
        guard case .actions(let run) = joined.first else { return }
        #expect(run.firstSequence == 1 && run.entries.map(\.payload) == [[1], [2], [3]])
        #expect(MessageRuns.join([action(1), action(2), action(3)], maxItems: 2, maxBytes: 1 << 18).map(\.command) == [.actions, .action])
    }

    @Test func aCoordinatorKeepsAcksWholeAndWalksThemInOrder() throws {
        let acks: [Message] = (1...3 as ClosedRange<UInt64>).map { sequence in
            .ack(.init(epoch: 7, sequence: sequence, results: [
                StoreResult(store: "a", status: .ok, digest: sequence * 10), StoreResult(store: "b", status: .ok, digest: sequence * 10 + 1),
            ]))
        }
        let joined = MessageRuns.join(acks, maxItems: 1_024, maxBytes: 1 << 18)
        #expect(joined.map(\.command) == [.acks])
        let kept = try codec.decodeAll(codec.encode(joined[0]), keepingAcks: true)
        guard kept.count == 1, case .acks(let run) = kept[0] else {
            Issue.record("not kept whole: \(kept.map(\.command))")
            return
        }
        var walked: [Message] = []
        run.forEachAck { walked.append(.ack($0)) }
        #expect(walked == acks)
    }

    @Test("a run whose counts disagree, that is empty, leaves a digest in its template or passes u64 is refused whole",
          arguments: ["no entries", "sequences past u64", "no acks", "no results", "a digest left", "digests short", "times short", "outcome digest left"])
    func malformedRunsAreRefused(_ flaw: String) {
        let result = StoreResult(store: "counter", status: .ok, digest: 0)
        let eight = [UInt8](repeating: 0, count: 8)
        let run: Message = switch flaw {
        case "no entries": .actions(.init(epoch: 1, firstSequence: 1, actionType: "a", plan: [], entries: []))
        case "sequences past u64": .actions(.init(epoch: 1, firstSequence: .max, actionType: "a", plan: [],
                                                  entries: [ActionEntry(payload: []), ActionEntry(payload: [])]))
        case "no acks": .acks(.init(epoch: 1, firstSequence: 1, count: 0, results: [result], digests: []))
        case "no results": .acks(.init(epoch: 1, firstSequence: 1, count: 1, results: [], digests: []))
        case "a digest left": .acks(.init(epoch: 1, firstSequence: 1, count: 1, results: [StoreResult(store: "c", status: .ok, digest: 5)], digests: eight))
        case "digests short": .acks(.init(epoch: 1, firstSequence: 1, count: 2, results: [result], digests: eight))
        case "times short": .completions(.init(epoch: 1, firstSequence: 1, count: 2, actionType: "a", outcomes: [], elapsedMicros: eight, digests: []))
        default: .completions(.init(epoch: 1, firstSequence: 1, count: 1, actionType: "a",
                                    outcomes: [Outcome(store: "c", worker: "w", status: .ok, digest: 1)], elapsedMicros: eight, digests: eight))
        }
        for frames in [codec.encode(run), codec.encode(codec.bundle([.heartbeat(.init(epoch: 1, sequence: 1)), run]))] {
            #expect(throws: DecodeError.self) { try codec.decodeAll(frames) }
            do { _ = try codec.decodeAll(frames) } catch { #expect(error.code == .badRun, "\(error)") }
            do { _ = try codec.decodeAll(frames, keepingAcks: true); Issue.record("kept whole: \(flaw)") } catch {
                #expect(error.code == .badRun, "\(error)")
            }
        }
    }
}
