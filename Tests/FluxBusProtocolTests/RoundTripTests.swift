import FluxBusProtocol
import Testing

@Suite("Round trips of hand-written messages")
struct RoundTripTests {
    let codec = Codec()

    static func example(_ command: Command) -> Message {
        Examples.all.first { $0.command == command }!
    }

    @Test("every command has exactly one hand-written example")
    func everyCommandHasAnExample() {
        #expect(Examples.all.map(\.command) == Command.allCases)
    }

    @Test("encode then decode gives the message back", arguments: Command.allCases)
    func roundTrip(_ command: Command) throws {
        let message = Self.example(command)
        let frames = codec.encode(message)
        #expect(frames.count == 2)
        #expect(frames[0] == [0x46, 0x4C, 0x58, 0x42, 0x08])
        #expect(frames[1].first == command.rawValue)
        #expect(try codec.decode(frames) == message)
        try codec.validate(message)
    }

    @Test("the in-place decoder over raw buffers agrees", arguments: Command.allCases)
    func rawBufferDecode(_ command: Command) throws {
        let message = Self.example(command)
        let frames = codec.encode(message)
        let decoded = try frames[0].withUnsafeBytes { signature in
            try frames[1].withUnsafeBytes { body in try codec.decode([signature, body]) }
        }
        #expect(decoded == message)
    }

    @Test("the annotated encoder used for the document writes the codec's exact bytes", arguments: Command.allCases)
    func annotatorIsFaithful(_ command: Command) {
        let message = Self.example(command)
        let (body, spans) = WireAnnotator.annotate(message)
        #expect(body == codec.encode(message)[1])
        // The spans tile the body: every byte is explained exactly once.
        #expect(spans.first?.range.lowerBound == 0)
        #expect(spans.last?.range.upperBound == body.count)
        #expect(zip(spans, spans.dropFirst()).allSatisfy { $0.range.upperBound == $1.range.lowerBound })
    }

    @Test("command names are the protocol's upper-case names")
    func commandNames() {
        #expect(Command.statusRequest.name == "STATUS_REQUEST")
        #expect("\(Command.hello)" == "HELLO")
        #expect(Set(Command.allCases.map(\.name)).count == Command.allCases.count)
        #expect(Command.allCases.allSatisfy { $0.name.allSatisfy { $0.isUppercase || $0 == "_" } })
    }

    @Test("FNV-1a 64 matches the published test vectors")
    func stateDigest() {
        #expect(StateDigest.fnv1a64([]) == 0xCBF2_9CE4_8422_2325)
        #expect(StateDigest.fnv1a64(Array("a".utf8)) == 0xAF63_DC4C_8601_EC8C)
        #expect(StateDigest.fnv1a64(Array("foobar".utf8)) == 0x8594_4171_F739_67E8)
    }
}
