import FluxBusProtocol
import Foundation
import Testing

/// `docs/vectors/messages.json`: messages as bytes and as fields, for any implementation to check its codec against
/// (docs/PROTOCOL.md, "Conformance vectors"). Every vector's bytes must decode to its fields and encode back to the
/// same bytes; and the file must hold exactly the vectors below, so that it changes only with the codec.
/// `FLUXBUS_WRITE_VECTORS=1 swift test --filter ConformanceVectorTests` rewrites it.
@Suite("docs/vectors/messages.json agrees with the codec")
struct ConformanceVectorTests {
    static let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs/vectors/messages.json")

    /// The vectors: the exchanges PROTOCOL.md shows, a batch's BUNDLE, a REPLAY range and the REPLAY that ends an
    /// answer, and one of every command with non-ASCII text and absent and present optionals.
    static var vectors: [(name: String, message: Message)] {
        let codec = Codec()
        let batchActions = (44...45).map { sequence in
            Message.action(.init(
                epoch: 7, sequence: UInt64(sequence), actionType: "counter.add", payload: Examples.utf8(#"{"by":1}"#),
                plan: [.init(store: "counter")]))
        }
        let entries = (40...41).map { sequence in
            ReplayEntry(
                epoch: 7, sequence: UInt64(sequence), actionType: "counter.add", payload: Examples.utf8(#"{"by":2}"#),
                plan: [.init(store: "counter")], outputs: [.init(store: "counter", status: .ok)])
        }
        return Examples.documented + [
            ("batch-bundle-of-actions", codec.bundle(batchActions)),
            ("fetch-range", .fetch(.init(epoch: 7, from: 40, to: 45))),
            ("replay-range", .replay(.init(epoch: 7, entries: entries, isLast: false))),
            ("replay-end-of-answer", .replay(.init(epoch: 7, entries: [], isLast: true))),
        ] + Examples.all.map { ("every-\($0.command)".lowercased(), $0) }
    }

    /// One vector as the file holds it: name, both frames in hex, the command, the fields, and for a BUNDLE its
    /// messages as commands and fields too.
    static func entry(_ name: String, _ message: Message) -> String {
        let codec = Codec()
        let frames = codec.encode(message)
        var entry = #"{"name":"\#(name)","frames":["\#(WireField.hex(frames[0]))","\#(WireField.hex(frames[1]))"],"#
            + #""command":"\#(message.command)","fields":\#(WireField.of(message).json)"#
        if case .bundle = message, let inner = try? codec.decodeAll(frames) {
            entry += #","bundled":["# + inner.map { #"{"command":"\#($0.command)","fields":\#(WireField.of($0).json)}"# }
                .joined(separator: ",") + "]"
        }
        return entry + "}"
    }

    static var expectedFile: String {
        let about = "Conformance vectors for FLXB/\(Codec.version) (docs/PROTOCOL.md, \\\"Conformance vectors\\\"). Each vector gives "
            + "a message's two frames in hex and its fields in wire order, named as the document's tables name them: u64 "
            + "values are decimal strings, bytes are lowercase hex, a status or code is its byte, an absent optional is null. "
            + "A BUNDLE's messages are also given decoded. Decoding the frames must give the fields; encoding the fields must "
            + "give the frames. FluxBusProtocolTests' ConformanceVectorTests checks the Swift codec against every vector."
        return "{\n  \"about\": \"\(about)\",\n  \"version\": \(Codec.version),\n  \"vectors\": [\n    "
            + vectors.map { entry($0.name, $0.message) }.joined(separator: ",\n    ") + "\n  ]\n}\n"
    }

    @Test("the file holds exactly the vectors the codec gives")
    func fileIsCurrent() throws {
        if ProcessInfo.processInfo.environment["FLUXBUS_WRITE_VECTORS"] == "1" {
            try Self.expectedFile.write(to: Self.file, atomically: true, encoding: .utf8)
        }
        let text = try String(contentsOf: Self.file, encoding: .utf8)
        #expect(text == Self.expectedFile, "docs/vectors/messages.json is stale: FLUXBUS_WRITE_VECTORS=1 swift test --filter ConformanceVectorTests")
    }

    @Test("every vector's frames decode to its fields and encode back to the same frames")
    func everyVectorRoundTrips() throws {
        let data = try Data(contentsOf: Self.file)
        let document = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let vectors = try #require(document["vectors"] as? [[String: Any]])
        #expect(vectors.count == Self.vectors.count)
        let codec = Codec()
        for vector in vectors {
            let name = vector["name"] as? String ?? "?"
            let hex = try #require(vector["frames"] as? [String], "\(name): frames")
            let frames = try hex.map { try #require(Self.bytes(hex: $0), "\(name): bad hex") }
            let message = try codec.decode(frames)
            #expect("\(message.command)" == vector["command"] as? String, "\(name)")
            // Compared as JSON with sorted keys, both sides read by the same parser.
            let fields = try Self.sorted(try #require(vector["fields"], "\(name): fields"))
            let decoded = try Self.sorted(try JSONSerialization.jsonObject(with: Data(WireField.of(message).json.utf8)))
            #expect(fields == decoded, "\(name): decoded fields differ")
            #expect(codec.encode(message) == frames, "\(name): re-encoding changed the bytes")
        }
        let commands = Set(vectors.compactMap { $0["command"] as? String })
        for required in ["HELLO", "ACK", "BUNDLE", "REPLAY", "ACTION", "FETCH", "SNAPSHOT"] {
            #expect(commands.contains(required), "a vector for \(required)")
        }
    }

    static func sorted(_ value: Any) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: value, options: [.sortedKeys]), as: UTF8.self)
    }

    /// The bytes a lowercase or uppercase hex string spells; nil for an odd length or a non-hex digit.
    static func bytes(hex: String) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard digits.count.isMultiple(of: 2) else { return nil }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let byte = UInt8(String(decoding: digits[index..<index + 2], as: UTF8.self), radix: 16) else { return nil }
            bytes.append(byte)
        }
        return bytes
    }
}
