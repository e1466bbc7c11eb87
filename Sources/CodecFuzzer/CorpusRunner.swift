#if !FUZZING
import FluxBusProtocol
import Foundation

/// Without libFuzzer (`swift build` builds every target without `-sanitize=fuzzer`), `CodecFuzzer` runs the harness
/// over corpus files, so the normal build compiles it and anyone can replay a crash input:
///
///     swift run CodecFuzzer Tests/Fuzz/corpus crash-1234…      # files or directories
///     swift run CodecFuzzer --write-corpus Tests/Fuzz/corpus   # (re)writes the seed corpus
///
/// Built with `-sanitize=fuzzer -DFUZZING` (`make fuzz`), this file is left out and libFuzzer's `main` drives
/// `LLVMFuzzerTestOneInput` instead.
@main
enum CorpusRunner {
    static func main() throws {
        let arguments = Array(CommandLine.arguments.dropFirst())
        if arguments.first == "--write-corpus", arguments.count == 2 {
            let written = try writeCorpus(to: URL(fileURLWithPath: arguments[1]))
            print("CodecFuzzer: wrote \(written) seed inputs to \(arguments[1])")
            return
        }
        guard !arguments.isEmpty, !arguments.contains("--help") else {
            print("usage: CodecFuzzer FILE-OR-DIRECTORY ... | CodecFuzzer --write-corpus DIRECTORY")
            return
        }
        var ran = 0
        var decoded = 0
        for path in arguments {
            for file in try files(at: URL(fileURLWithPath: path)) {
                let input = try Data(contentsOf: file)
                input.withUnsafeBytes { CodecHarness.run($0) }
                let frames = input.withUnsafeBytes { CodecHarness.frames($0) }
                if (try? Codec().decode(frames)) != nil { decoded += 1 }
                ran += 1
            }
        }
        print("CodecFuzzer: ran \(ran) inputs, \(decoded) decoded, no disagreement")
    }

    /// The file at `url`, or the files in the directory at `url`, sorted by name.
    static func files(at url: URL) throws -> [URL] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: url.path])
        }
        guard isDirectory.boolValue else { return [url] }
        return try FileManager.default.contentsOfDirectory(at: url, includingPropertiesForKeys: nil)
            .filter { !$0.lastPathComponent.hasPrefix(".") }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
    }

    /// Writes three valid encodings of every command (see ``SampleFields``), named `COMMAND-VARIANT`.
    static func writeCorpus(to directory: URL) throws -> Int {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var written = 0
        for command in Command.allCases {
            for variant in 0..<3 {
                var fields = SampleFields(variant: variant)
                let frames = Codec().encode(fields.message(command))
                let input = CodecHarness.input(signature: frames[0], body: frames[1])
                let name = "\(command.name.lowercased())-\(variant)"
                try Data(input).write(to: directory.appendingPathComponent(name))
                written += 1
            }
        }
        // Runs whose counts agree with their lists, which the samples' fields rarely give: joined from alike messages.
        for (index, run) in sampleRuns.enumerated() {
            let frames = Codec().encode(run)
            let input = CodecHarness.input(signature: frames[0], body: frames[1])
            try Data(input).write(to: directory.appendingPathComponent("run-\(index)"))
            written += 1
        }
        return written
    }

    /// An ACTIONS, an ACKS and a COMPLETIONS of three messages each, as a coordinator and a worker join them.
    static var sampleRuns: [Message] {
        let plan = [PlanStep(store: "counter"), PlanStep(store: "país", waitsFor: ["counter"])]
        let messages: [[Message]] = [
            (1...3).map { .action(.init(epoch: 2, sequence: $0, actionType: "counter.add", payload: Array(#"{"by":\#($0)}"#.utf8),
                                         error: $0 == 2 ? "✈︎" : nil, plan: plan)) },
            (1...3).map { .ack(.init(epoch: 2, sequence: $0, results: [
                .init(store: "counter", status: .ok, digest: $0 * 7), .init(store: "país", status: .skipped, message: "x", digest: 9),
            ])) },
            (1...3).map { .completed(.init(epoch: 2, sequence: $0, actionType: "counter.add", elapsedMicros: $0 * 100, outcomes: [
                .init(store: "counter", worker: "w1", status: .ok, digest: $0),
            ])) },
        ]
        return messages.flatMap { MessageRuns.join($0, maxItems: 1_024, maxBytes: 1 << 18) }
    }
}
#endif
