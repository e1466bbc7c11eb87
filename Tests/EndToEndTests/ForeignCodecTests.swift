import Foundation
import Testing

/// The conformance vectors hold a second implementation too: the Python worker of `Tests/ForeignWorker`, written
/// from PROTOCOL.md alone, decodes every vector of a message a coordinator sends a worker (BUNDLEs through its
/// `unbundle`, runs through its `expand`) and must find the same epochs, sequences, stores and REPLAY ends as the
/// vector's fields.
@Suite("The Python worker's codec agrees with docs/vectors/messages.json", .timeLimit(.minutes(1)))
struct ForeignCodecTests {
    static let check = #"""
        import json, sys
        sys.path.insert(0, sys.argv[1])
        import fluxbus_worker as fw
        vectors = json.load(open(sys.argv[2]))["vectors"]
        names = {v: k for k, v in fw.COMMAND_NAMES.items()}
        decodable = {"WELCOME", "REJECT", "ACTION", "RELEASE", "REPLAY", "HEARTBEAT", "GOODBYE", "SNAPSHOT",
                     "PULL", "CHUNK", "RESULT", "ERROR", "STATE_REQUEST", "COMPLETED", "ACTIONS", "COMPLETIONS"}
        checked = 0
        for vector in vectors:
            command, fields = vector["command"], vector["fields"]
            body = bytes.fromhex(vector["frames"][1])
            assert bytes.fromhex(vector["frames"][0]) == fw.SIGNATURE, vector["name"]
            if command == "BUNDLE":
                inner = [fw.decode(b) for b in fw.unbundle(body) if b[0] in [names[c] for c in decodable]]
                assert len(inner) == len([m for m in vector["bundled"] if m["command"] in decodable]), vector["name"]
                checked += 1
                continue
            if command not in decodable:
                continue
            code, got = fw.decode(body)
            assert code == names[command], vector["name"]
            if command in ("ACTIONS", "COMPLETIONS"):
                # A run stands for its messages: the worker takes it apart into them, in sequence order.
                expanded = fw.expand(code, got)
                first = int(fields["firstSequence"])
                count = len(fields["entries"]) if command == "ACTIONS" else int(fields["count"])
                sequences = [f["action"].sequence if c == fw.ACTION else f["sequence"] for c, f in expanded]
                assert sequences == list(range(first, first + count)), (vector["name"], sequences)
                if command == "ACTIONS":
                    assert [f["action"].payload.hex() for _, f in expanded] == [e["payload"] for e in fields["entries"]]
                else:
                    digests = [o.digest for _, f in expanded for o in f["outcomes"]]
                    assert digests == [int(fields["digests"][i:i + 16], 16) for i in range(0, len(fields["digests"]), 16)]
                checked += 1
                continue
            action = got.get("action")
            for key in ("epoch", "sequence"):
                if key in fields:
                    value = getattr(action, key) if action is not None else got[key]
                    assert value == int(fields[key]), (vector["name"], key, value, fields[key])
            if command == "REPLAY":
                assert got["last"] == fields["last"], vector["name"]
                assert [e[0].sequence for e in got["entries"]] == [int(e["sequence"]) for e in fields["entries"]]
            if "store" in fields:
                assert got["store"] == fields["store"], vector["name"]
            checked += 1
        print(checked)
        """#

    @Test func everyVectorAWorkerReceivesDecodesAlike() async throws {
        let python = try await Cluster.requirePython()
        let process = Process()
        process.executableURL = python
        process.arguments = [
            "-c", Self.check, Cluster.foreignWorker.deletingLastPathComponent().path,
            Cluster.packageRoot.appendingPathComponent("docs/vectors/messages.json").path,
        ]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        process.waitUntilExit()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationStatus == 0, "\(text)")
        #expect((Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0) >= 15, "vectors checked: \(text)")
    }
}
