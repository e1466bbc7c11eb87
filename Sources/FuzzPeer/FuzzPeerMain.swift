#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `fluxbus-fuzz-peer`: a hostile peer for the socket-level fuzz test (`Tests/EndToEndTests/SocketFuzzTests.swift`).
@main
enum FuzzPeerMain {
    static func main() {
        let arguments = Array(CommandLine.arguments.dropFirst())
        if arguments.contains("--help") || arguments.contains("-h") {
            print(FuzzPeerOptions.usage)
            exit(0)
        }
        let options: FuzzPeerOptions
        do {
            options = try FuzzPeerOptions(arguments)
        } catch {
            printError("fluxbus-fuzz-peer: \(error)\n\n\(FuzzPeerOptions.usage)\n")
            exit(2)
        }
        printError("fluxbus-fuzz-peer: --seed \(options.seed) --count \(options.count) --endpoint \(options.endpoint)\n")
        do {
            let summary = try FuzzPeer(options: options).run()
            print(summary.json(seed: options.seed, count: options.count))
            if !summary.barrierAnswered {
                printError("fluxbus-fuzz-peer: the coordinator did not answer a barrier within \(options.barrierTimeoutSeconds) s\n")
                exit(1)
            }
        } catch {
            printError("fluxbus-fuzz-peer: \(error)\n")
            exit(1)
        }
    }

    /// Writes `text` to standard error, unbuffered.
    static func printError(_ text: String) {
        var text = text
        text.withUTF8 { bytes in _ = write(STDERR_FILENO, bytes.baseAddress, bytes.count) }
    }
}
