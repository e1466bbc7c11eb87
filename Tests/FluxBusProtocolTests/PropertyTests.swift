import FluxBusProtocol
import PropertyBased
import Testing

/// Round trips of generated messages, through PropertyBased (which prints a seed to replay any
/// failure with `.fixedSeed(…)`).
@Suite("Property-based round trips")
struct PropertyTests {
    let codec = Codec()

    /// Any message of `command` with random content, filled through the codec's own layouts.
    static func messages(_ command: Command? = nil) -> Generator<Message, Shrink.None<Message>> {
        Generator { rng in
            var filler = RandomFiller(rng: SplitMix64(seed: rng.next()))
            return command.map { filler.message($0) } ?? filler.message()
        }
    }

    /// Strings mixing ASCII, Latin, Greek, CJK and emoji (1- to 4-byte UTF-8).
    static let text = Gen.oneOf(
        Gen.letterOrNumber,
        Gen.character(in: " "..."~"),
        Gen.character(in: "\u{A0}"..."\u{24F}"),
        Gen.character(in: "\u{391}"..."\u{3C9}"),
        Gen.character(in: "\u{4E00}"..."\u{9FFF}"),
        Gen.character(in: "\u{1F300}"..."\u{1F64F}")
    ).string(of: 0...40)

    static let bytes = Gen.uint8().array(of: 0...64)

    func assertRoundTrip(_ message: Message) throws {
        let frames = codec.encode(message)
        let decoded = try codec.decode(frames)
        #expect(decoded == message)
        // The encoding is canonical: decoding then encoding gives back the same bytes.
        #expect(codec.encode(decoded) == frames)
        #expect(WireAnnotator.annotate(message).body == frames[1])
    }

    @Test("random messages of every command round-trip", arguments: Command.allCases)
    func everyCommand(_ command: Command) async {
        await propertyCheck(count: 150, input: Self.messages(command)) { message in
            #expect(message.command == command)
            try assertRoundTrip(message)
        }
    }

    @Test("any random message round-trips")
    func anyMessage() async {
        await propertyCheck(count: 1000, input: Self.messages()) { message in
            try assertRoundTrip(message)
        }
    }

    @Test("ACTION round-trips any text, payload and numbers (shrinking on failure)")
    func action() async {
        await propertyCheck(input: Self.text, Self.bytes, Gen.uint64(), Gen.bool) { text, payload, number, hasError in
            let action = Message.action(.init(
                epoch: number, sequence: ~number, actionType: text, payload: payload, error: hasError ? text : nil,
                plan: [.init(store: text, waitsFor: [text, ""])]
            ))
            try assertRoundTrip(action)
        }
    }

    @Test("ACK results round-trip any lists of outputs and statuses")
    func ack() async {
        let result = zip(Self.text, Gen<OutcomeStatus>.case, Self.bytes.optional, Gen.uint64())
            .map { value in StoreResult(store: value.0, status: value.1, message: value.0, output: value.2, digest: value.3) }
        await propertyCheck(input: result.array(of: 0...20), Gen.uint64()) { results, sequence in
            try assertRoundTrip(.ack(.init(epoch: 1, sequence: sequence, results: results)))
        }
    }

    @Test("a body's size is the command byte plus the sum of its fields")
    func sizeIsExact() async {
        await propertyCheck(count: 300, input: Self.text, Self.bytes) { text, payload in
            let frames = codec.encode(.dispatch(.init(requestID: text, actionType: text, payload: payload)))
            // The last 2 bytes: an empty traceparent, what an untraced DISPATCH costs.
            #expect(frames[1].count == 1 + 2 * (2 + text.utf8.count) + 4 + payload.count + 1 + 2)
        }
    }
}
