import FluxBusProtocol
import Foundation
import Testing

/// Runs the Python worker of `docs/PROTOCOL.md`, Appendix B, without ZeroMQ: its HELLO, its
/// ACK to the example ACTION and its ACKs to a run of ACTIONs in a BUNDLE must be the codec's bytes,
/// so that the document alone is enough to write a worker that joins and acknowledges. Skipped
/// where no `python3` is installed.
@Suite("The document's Python worker speaks the codec's bytes")
struct PythonWorkerTests {
    static let python: String? = ["/usr/bin/python3", "/usr/local/bin/python3", "/bin/python3"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }

    static let check = """
        import sys
        from fluxbus_worker import Worker, CountryStore
        welcome, heartbeat, action, run = (bytes.fromhex(arg) for arg in sys.argv[1:])
        worker = Worker("w1", CountryStore(), instance=0x5EED000000000001)
        print(worker.hello()[1].hex())
        assert worker.receive(welcome, from_sub=False) == []
        assert worker.receive(heartbeat, from_sub=True) == []
        print(worker.receive(action, from_sub=True)[0][1].hex())
        print(worker.receive(action, from_sub=True)[0][1].hex())  # a duplicate is acknowledged again
        print(worker.store.state["country"])
        print(" ".join(ack[1].hex() for ack in worker.receive(run, from_sub=True)))  # ACTIONS, in a BUNDLE
        print(worker.store.state["country"])
        """

    @Test("HELLO and ACK from the Python sketch equal the codec's", .enabled(if: python != nil), .timeLimit(.minutes(1)))
    func pythonWorker() throws {
        let document = try ProtocolDocument.load()
        let source = try #require(document.block(after: "<!-- python-worker -->"), "no Python block in the document")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fluxbus-python-\(UInt64.random(in: 0...UInt64.max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try source.write(to: directory.appendingPathComponent("fluxbus_worker.py"), atomically: true, encoding: .utf8)
        try Self.check.write(to: directory.appendingPathComponent("check.py"), atomically: true, encoding: .utf8)

        let codec = Codec()
        let hex = { (message: Message) in codec.encode(message)[1].map { String(format: "%02x", $0) }.joined() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try #require(Self.python))
        process.currentDirectoryURL = directory
        // The next two dispatches as the coordinator publishes a batch: one ACTIONS, here in a BUNDLE with a HEARTBEAT.
        let countries = ["Japan", "Peru"]
        let run = codec.bundle([
            .heartbeat(.init(epoch: 1, sequence: 1)),
            .actions(.init(epoch: 1, firstSequence: 2, actionType: "country-update", plan: [.init(store: "country")],
                           entries: countries.map { ActionEntry(payload: Examples.utf8(#"{"country":"\#($0)"}"#)) })),
        ])
        let acks = countries.enumerated().map { offset, country in
            let state = Examples.utf8(#"{"country":"\#(country)"}"#)
            return hex(.ack(.init(epoch: 1, sequence: 2 + UInt64(offset), results: [
                .init(store: "country", status: .ok, output: state, digest: StateDigest.fnv1a64(state)),
            ])))
        }
        process.arguments = ["check.py", hex(Examples.joinWelcome), hex(Examples.joinHeartbeat), hex(Examples.dispatchAction), hex(run)]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(printed.split(separator: "\n").map(String.init)
            == [hex(Examples.joinHello), hex(Examples.dispatchAck), hex(Examples.dispatchAck), "France", acks.joined(separator: " "), "Peru"])
    }
}
